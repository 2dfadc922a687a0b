package org.apache.rocketmq.controller.impl.heartbeat;

import io.netty.channel.Channel;
import java.util.Map;
import org.apache.rocketmq.common.ControllerConfig;
import org.apache.rocketmq.controller.BrokerHeartbeatManager;
import org.apache.rocketmq.controller.helper.BrokerLifecycleListener;

/** Stand-in that cuts the JRaft controller out of the build (rmqha drives the default manager). */
public class RaftBrokerHeartBeatManager implements BrokerHeartbeatManager {
    public RaftBrokerHeartBeatManager(ControllerConfig config) { throw new UnsupportedOperationException("JRaft is not built"); }
    public void initialize() { }
    public void onBrokerHeartbeat(String c, String b, String a, Long id, Long t, Channel ch, Integer e, Long m, Long co, Integer p) { }
    public void start() { }
    public void shutdown() { }
    public void registerBrokerLifecycleListener(BrokerLifecycleListener listener) { }
    public void onBrokerChannelClose(Channel channel) { }
    public BrokerLiveInfo getBrokerLiveInfo(String c, String b, Long id) { return null; }
    public boolean isBrokerActive(String c, String b, Long id) { return false; }
    public Map<String, Map<String, Integer>> getActiveBrokersNum() { return null; }
}
