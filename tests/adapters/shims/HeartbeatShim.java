// A DLedger handler shim in Java for the jvm: transport: DLedgerLeaderElector.handleHeartBeat's
// decision table, answered through the adapter protocol's String handle(String requestJson).
// Compiled with javac during the tests (no dependencies: it carries a tiny JSON reader).
// The nested classes misbehave on purpose: Hanging never answers, Garbage answers non-JSON,
// Throwing throws, WrongOrder checks the term before the peer (must be caught).
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class HeartbeatShim {
    public String handle(String requestJson) {
        Map<String, Object> req = obj(new Reader(requestJson).value());
        Object id = req.get("id");
        String op = (String) req.get("op");
        if (op.equals("hello")) {
            return ok(id, "{\"protocol\":\"rmqha-adapter/1\",\"implementation\":\"" + name()
                    + "\",\"version\":\"1.0\",\"profiles\":{\"dledger\":\"dledger-0.4\"},"
                    + "\"operations\":[\"dledger.handle_heartbeat\"],\"nodes\":[]}");
        }
        if (op.equals("bye")) {
            return ok(id, "{}");
        }
        Map<String, Object> args = obj(req.get("args"));
        if (!op.equals("call") || !"dledger.handle_heartbeat".equals(args.get("operation"))) {
            return "{\"rmqha\":1,\"id\":" + id + ",\"ok\":false,\"error\":{\"code\":\"unsupported\",\"message\":\"no\"}}";
        }
        Map<String, Object> a = obj(args.get("args"));
        return ok(id, decide(obj(a.get("member")), obj(a.get("request"))));
    }

    protected String name() {
        return "heartbeat-shim-java";
    }

    protected String decide(Map<String, Object> m, Map<String, Object> r) {
        long c = num(m.get("curr_term"));
        long term = num(r.get("term"));
        String leader = (String) r.get("leader");
        Object known = m.get("leader_id");
        if (!((List<?>) m.get("peers")).contains(leader)) return decision("UNKNOWN_MEMBER", c, "");
        if (leader.equals(m.get("self_id"))) return decision("UNEXPECTED_MEMBER", c, "");
        if (term < c) return decision("EXPIRED_TERM", c, "");
        if (term == c) {
            if (leader.equals(known)) return decision("SUCCESS", -1, "{\"@type\":\"RefreshLeaderHeartbeat\"}");
            if (known == null) {
                return decision("SUCCESS", -1,
                        "{\"@type\":\"BecomeFollower\",\"term\":" + term + ",\"leader\":\"" + leader + "\"}");
            }
            return decision("INCONSISTENT_LEADER", -1, "");
        }
        return decision("TERM_NOT_READY", -1,
                "{\"@type\":\"BecomeCandidate\",\"term\":" + term + "},{\"@type\":\"IncreaseTermImmediately\"}");
    }

    static String decision(String code, long replyTerm, String effects) {
        return "{\"@type\":\"HeartbeatDecision\",\"code\":\"" + code + "\",\"reply_term\":" + replyTerm
                + ",\"effects\":[" + effects + "]}";
    }

    static String ok(Object id, String result) {
        return "{\"rmqha\":1,\"id\":" + id + ",\"ok\":true,\"result\":" + result + "}";
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Object o) {
        return (Map<String, Object>) o;
    }

    static long num(Object o) {
        return ((Number) o).longValue();
    }

    public static class Hanging extends HeartbeatShim {
        protected String decide(Map<String, Object> m, Map<String, Object> r) {
            try {
                Thread.sleep(3_600_000L);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return "{}";
        }
    }

    public static class Garbage extends HeartbeatShim {
        public String handle(String requestJson) {
            return requestJson.contains("\"hello\"") ? super.handle(requestJson) : "<html>oops</html>";
        }
    }

    public static class Throwing extends HeartbeatShim {
        protected String decide(Map<String, Object> m, Map<String, Object> r) {
            throw new IllegalStateException("member state is locked");
        }
    }

    public static class WrongOrder extends HeartbeatShim {
        protected String name() {
            return "heartbeat-shim-java+wrong-order";
        }

        protected String decide(Map<String, Object> m, Map<String, Object> r) {
            if (num(r.get("term")) < num(m.get("curr_term"))) return decision("EXPIRED_TERM", num(m.get("curr_term")), "");
            return super.decide(m, r);
        }
    }

    /** Just enough JSON: objects, arrays, strings without escapes beyond \" and \\, integers, literals. */
    static final class Reader {
        private final String s;
        private int i;

        Reader(String s) {
            this.s = s;
        }

        Object value() {
            skip();
            char ch = s.charAt(i);
            if (ch == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                skip();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    skip();
                    String k = (String) value();
                    skip();
                    i++; // ':'
                    m.put(k, value());
                    skip();
                    if (s.charAt(i++) == '}') return m;
                }
            }
            if (ch == '[') {
                List<Object> l = new ArrayList<>();
                i++;
                skip();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) {
                    l.add(value());
                    skip();
                    if (s.charAt(i++) == ']') return l;
                }
            }
            if (ch == '"') {
                StringBuilder b = new StringBuilder();
                i++;
                while (s.charAt(i) != '"') {
                    if (s.charAt(i) == '\\') i++;
                    b.append(s.charAt(i++));
                }
                i++;
                return b.toString();
            }
            if (s.startsWith("null", i)) { i += 4; return null; }
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            int start = i;
            while (i < s.length() && "-0123456789".indexOf(s.charAt(i)) >= 0) i++;
            return Long.parseLong(s.substring(start, i));
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
        }
    }
}
