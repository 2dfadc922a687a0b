package rmqha.jvm;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.xbean.asm9.ClassReader;
import org.apache.xbean.asm9.ClassVisitor;
import org.apache.xbean.asm9.ClassWriter;
import org.apache.xbean.asm9.MethodVisitor;
import org.apache.xbean.asm9.Opcodes;

/**
 * A virtual clock for the real DLedger elector (rmqha's own harness, not upstream code).
 *
 * <p>{@link Loader} loads the classes of one DLedger build and redirects, in their
 * bytecode, every call that reads or spends time or randomness to the static methods
 * below: {@code System.currentTimeMillis}/{@code nanoTime}, {@code CountDownLatch.await(long,
 * TimeUnit)}, {@code Thread.sleep(long)}, {@code Random.nextInt(int)} and the RPC service's
 * {@code heartBeat}/{@code vote}/{@code leadershipTransfer}. Nothing else of the release
 * changes. Python (adapters/jvm_targets.py) scripts a round: the time the maintainer
 * runs, each peer's reply with the time it arrives, the random values; it then calls
 * the elector's own {@code maintainAsLeader} / {@code maintainAsCandidate} and reads the
 * state they leave and the time they return at.
 *
 * <p>Time moves only while the elector waits: {@code await} delivers the scripted replies
 * in order of arrival (ties: as scripted), completing their futures on the calling
 * thread, until the latch opens (it returns at the instant of the reply that opened
 * it) or the timeout passes; {@code sleep} delivers every reply due by its end, that
 * instant included. One round at a time (static state, one thread).
 */
public final class VirtualTime {
    private VirtualTime() {
    }

    private static final class Event {
        final long time;
        final long seq;
        final CompletableFuture<Object> future;
        final Object response; // null: the request failed

        Event(long time, long seq, CompletableFuture<Object> future, Object response) {
            this.time = time;
            this.seq = seq;
            this.future = future;
            this.response = response;
        }

        void fire() {
            if (response == null) {
                future.completeExceptionally(new IOException("rmqha: the request failed (scripted)"));
            } else {
                future.complete(response);
            }
        }
    }

    private static final class Script {
        final long at;
        final long seq;
        final Object response;

        Script(long at, long seq, Object response) {
            this.at = at;
            this.seq = seq;
            this.response = response;
        }
    }

    private static long now;
    private static long seq;
    private static final PriorityQueue<Event> EVENTS = new PriorityQueue<>(
        (a, b) -> a.time != b.time ? Long.compare(a.time, b.time) : Long.compare(a.seq, b.seq));
    private static final Map<String, Script> REPLIES = new HashMap<>();
    private static final Map<String, Integer> DRAWS = new HashMap<>();
    private static final List<Object> SENT = new ArrayList<>();
    private static final List<String> DRAWN = new ArrayList<>();

    // ------------------------------------------------------------------ scripting (Python)

    /** A new round at {@code start}: no pending replies, no scripted values. */
    public static void reset(long start) {
        now = start;
        seq = 0;
        EVENTS.clear();
        REPLIES.clear();
        DRAWS.clear();
        SENT.clear();
        DRAWN.clear();
    }

    /** {@code peer} answers {@code response} (null: fails) {@code at} ms after it is asked. */
    public static void reply(String peer, long at, Object response) {
        REPLIES.putIfAbsent(peer, new Script(at, seq++, response));
    }

    /** The value {@code Random.nextInt} returns at {@code site} ("vote_wait", "vote_interval"). */
    public static void draw(String site, int value) {
        DRAWS.put(site, value);
    }

    public static long now() {
        return now;
    }

    /** The requests the elector sent, in order. */
    public static List<Object> sent() {
        return new ArrayList<>(SENT);
    }

    /** "site:bound" of every random value drawn, in order. */
    public static List<String> drawn() {
        return new ArrayList<>(DRAWN);
    }

    // ------------------------------------------------------------------ the redirected calls

    public static long currentTimeMillis() {
        return now;
    }

    public static long nanoTime() {
        return now * 1_000_000L;
    }

    public static boolean await(CountDownLatch latch, long timeout, TimeUnit unit) {
        long deadline = now + unit.toMillis(timeout);
        while (latch.getCount() > 0) {
            Event e = EVENTS.peek();
            if (e == null || e.time > deadline) {
                now = Math.max(now, deadline);
                return false;
            }
            EVENTS.poll();
            now = Math.max(now, e.time);
            e.fire();
        }
        return true;
    }

    public static void sleep(long millis) {
        long until = now + millis;
        while (!EVENTS.isEmpty() && EVENTS.peek().time <= until) {
            Event e = EVENTS.poll();
            now = Math.max(now, e.time);
            e.fire();
        }
        now = Math.max(now, until);
    }

    public static int nextIntVoteWait(Random random, int bound) {
        return scripted("vote_wait", bound);
    }

    public static int nextIntVoteInterval(Random random, int bound) {
        return scripted("vote_interval", bound);
    }

    public static int nextIntOther(Random random, int bound) {
        return scripted("other", bound);
    }

    private static int scripted(String site, int bound) {
        DRAWN.add(site + ":" + bound);
        Integer value = DRAWS.get(site);
        if (value == null) {
            throw new IllegalStateException("rmqha: no random value scripted for " + site);
        }
        if (value < 0 || value >= bound) {
            throw new IllegalArgumentException("rmqha: scripted " + site + " value " + value
                + " is outside the release's range [0, " + bound + ")");
        }
        return value;
    }

    /** dLedgerRpcService.heartBeat/vote/leadershipTransfer(request): the scripted reply's future. */
    public static CompletableFuture<Object> rpc(Object service, Object request) throws Exception {
        SENT.add(request);
        Method getter = request.getClass().getMethod("getRemoteId");
        Script s = REPLIES.get((String) getter.invoke(request));
        CompletableFuture<Object> future = new CompletableFuture<>();
        if (s != null) {
            EVENTS.add(new Event(now + s.at, s.seq, future, s.response));
        }
        return future;
    }

    // ------------------------------------------------------------------ the class loader

    /** Loads one DLedger build, child-first, with the calls above redirected. */
    public static final class Loader extends URLClassLoader {
        private static final String PACKAGE = "io.openmessaging.storage.dledger.";

        public Loader(URL[] urls, ClassLoader parent) {
            super(urls, parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith(PACKAGE)) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    URL url = findResource(name.replace('.', '/') + ".class");
                    if (url == null) {
                        throw new ClassNotFoundException(name);
                    }
                    byte[] code;
                    try (InputStream in = url.openStream()) {
                        code = rewrite(in.readAllBytes());
                    } catch (IOException ex) {
                        throw new ClassNotFoundException(name, ex);
                    }
                    c = defineClass(name, code, 0, code.length);
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }

    private static final String SELF = "rmqha/jvm/VirtualTime";

    static byte[] rewrite(byte[] code) {
        ClassReader reader = new ClassReader(code);
        ClassWriter writer = new ClassWriter(reader, 0);
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(int access, String method, String desc, String sig, String[] exc) {
                return new Redirect(super.visitMethod(access, method, desc, sig, exc), method);
            }
        }, 0);
        return writer.toByteArray();
    }

    private static final class Redirect extends MethodVisitor {
        private final String method;

        Redirect(MethodVisitor next, String method) {
            super(Opcodes.ASM9, next);
            this.method = method;
        }

        @Override
        public void visitMethodInsn(int op, String owner, String name, String desc, boolean itf) {
            String to = target(op, owner, name, desc);
            if (to == null) {
                super.visitMethodInsn(op, owner, name, desc, itf);
                return;
            }
            String[] parts = to.split(" ");
            super.visitMethodInsn(Opcodes.INVOKESTATIC, SELF, parts[0], parts[1], false);
        }

        private String target(int op, String owner, String name, String desc) {
            if (op == Opcodes.INVOKESTATIC && owner.equals("java/lang/System")) {
                if (name.equals("currentTimeMillis")) {
                    return "currentTimeMillis ()J";
                }
                if (name.equals("nanoTime")) {
                    return "nanoTime ()J";
                }
            }
            if (op == Opcodes.INVOKESTATIC && name.equals("sleep") && desc.equals("(J)V")
                && (owner.equals("java/lang/Thread") || owner.startsWith("io/openmessaging/"))) {
                return "sleep (J)V";
            }
            if (op == Opcodes.INVOKEVIRTUAL && owner.equals("java/util/concurrent/CountDownLatch")
                && name.equals("await") && desc.equals("(JLjava/util/concurrent/TimeUnit;)Z")) {
                return "await (Ljava/util/concurrent/CountDownLatch;JLjava/util/concurrent/TimeUnit;)Z";
            }
            if (op == Opcodes.INVOKEVIRTUAL && owner.equals("java/util/Random") && name.equals("nextInt")
                && desc.equals("(I)I")) {
                String site = method.equals("maintainAsCandidate") ? "VoteWait"
                    : method.equals("getNextTimeToRequestVote") ? "VoteInterval" : "Other";
                return "nextInt" + site + " (Ljava/util/Random;I)I";
            }
            if ((op == Opcodes.INVOKEVIRTUAL || op == Opcodes.INVOKEINTERFACE) && owner.endsWith("/DLedgerRpcService")
                && (name.equals("heartBeat") || name.equals("vote") || name.equals("leadershipTransfer"))) {
                return "rpc (Ljava/lang/Object;Ljava/lang/Object;)Ljava/util/concurrent/CompletableFuture;";
            }
            return null;
        }
    }
}
