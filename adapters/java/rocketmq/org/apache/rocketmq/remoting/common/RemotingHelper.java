package org.apache.rocketmq.remoting.common;

import io.netty.channel.Channel;

/** Stand-in that keeps the netty server out of the build (rmqha passes no channels). */
public final class RemotingHelper {
    private RemotingHelper() { }
    public static void closeChannel(Channel channel) {
        if (channel != null) {
            channel.close();
        }
    }
    public static String parseChannelRemoteAddr(Channel channel) { return channel == null ? "" : String.valueOf(channel.remoteAddress()); }
}
