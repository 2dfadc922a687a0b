package org.apache.commons.validator.routines;

import java.net.InetAddress;

/** Stand-in for commons-validator's InetAddressValidator (never reached by rmqha's calls). */
public class InetAddressValidator {
    private static final InetAddressValidator INSTANCE = new InetAddressValidator();
    public static InetAddressValidator getInstance() { return INSTANCE; }
    public boolean isValidInet4Address(String s) { return s != null && s.matches("\\d{1,3}(\\.\\d{1,3}){3}"); }
    public boolean isValidInet6Address(String s) { return s != null && s.contains(":"); }
}
