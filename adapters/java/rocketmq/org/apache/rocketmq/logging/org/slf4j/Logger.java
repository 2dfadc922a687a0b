package org.apache.rocketmq.logging.org.slf4j;

/** Stand-in for RocketMQ's shaded slf4j Logger: discards everything. */
public class Logger {
    public void trace(String msg, Object... args) { }
    public void debug(String msg, Object... args) { }
    public void info(String msg, Object... args) { }
    public void warn(String msg, Object... args) { }
    public void error(String msg, Object... args) { }
    public boolean isTraceEnabled() { return false; }
    public boolean isDebugEnabled() { return false; }
    public boolean isInfoEnabled() { return false; }
    public boolean isWarnEnabled() { return false; }
    public boolean isErrorEnabled() { return false; }
    public String getName() { return "rmqha-stub"; }
}
