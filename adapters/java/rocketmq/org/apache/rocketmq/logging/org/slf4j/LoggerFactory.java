package org.apache.rocketmq.logging.org.slf4j;

/** Stand-in for RocketMQ's shaded slf4j LoggerFactory. */
public final class LoggerFactory {
    private static final Logger LOGGER = new Logger();
    private LoggerFactory() { }
    public static Logger getLogger(String name) { return LOGGER; }
    public static Logger getLogger(Class<?> cls) { return LOGGER; }
}
