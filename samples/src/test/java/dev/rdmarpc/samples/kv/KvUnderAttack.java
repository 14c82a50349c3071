package dev.rdmarpc.samples.kv;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import dev.rdmarpc.health.HealthService;
import io.grpc.ManagedChannel;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KV sample server with its defaults ({@link KvServer#builder}: 64 MiB requests, every other limit rdmarpc's
 * default), on its own slab pool so that what it holds can be read, and the well-behaved clients — rdmarpc and stock
 * grpc-java over HTTP/2 — whose calls must be answered while a hostile client attacks. A JUnit extension: a fresh
 * server and clients for each test, closed after it with every server buffer released.
 */
final class KvUnderAttack implements BeforeEachCallback, AfterEachCallback {
    /** The default concurrent streams per connection. */
    static final int STREAMS = 100;
    /** Platform threads the JVM may start meanwhile for reasons of its own (a JIT or GC helper, a timer). */
    private static final int THREAD_SLACK = 8;

    final SlabPool pool = new SlabPool(0, true);
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final KeyValueStore store = new KeyValueStore();
    /** Why each connection the server closed was closed. */
    final java.util.Queue<String> closeReasons = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final AtomicInteger goodCalls = new AtomicInteger();
    private RpcServer server;
    private RpcChannel channel;
    private ManagedChannel grpc;

    @Override
    public void beforeEach(ExtensionContext context) throws IOException {
        server = KvServer.builder(0, store, new HealthService(), KvServer.DEFAULT_MAX_MESSAGE_MIB).slabPool(pool).meterRegistry(meters)
                .connectionListener(new dev.rdmarpc.core.PeerConnectionListener() {
                    @Override
                    public void connectionOpened(dev.rdmarpc.core.PeerConnection connection) {
                    }

                    @Override
                    public void connectionClosed(dev.rdmarpc.core.PeerConnection connection, String reason) {
                        closeReasons.add(reason);
                    }
                }).build().start();
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).maxInboundMessageSize(64 << 20).build();
        grpc = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).negotiationType(NegotiationType.PLAINTEXT)
                .maxInboundMessageSize(64 << 20).build();
        goodClientsServed(); // both connections open before any attack: a baseline for held bytes and threads
    }

    int port() {
        return server.getPort();
    }

    /** A Put then a Get from the rdmarpc client and from the stock gRPC client, each on its own connection. */
    void goodClientsServed() {
        int n = goodCalls.incrementAndGet();
        ByteString key = ByteString.copyFromUtf8("good/" + n);
        ByteString value = ByteString.copyFromUtf8("value " + n);
        var kv = KeyValueRpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        kv.put(PutRequest.newBuilder().setKey(key).setValue(value).build());
        assertEquals(value, kv.get(GetRequest.newBuilder().setKey(key).build()).getValue(), "the rdmarpc client is served");
        var h2 = KeyValueGrpc.newBlockingStub(grpc).withDeadlineAfter(60, TimeUnit.SECONDS);
        ByteString h2Key = ByteString.copyFromUtf8("good-h2/" + n);
        h2.put(PutRequest.newBuilder().setKey(h2Key).setValue(value).build());
        assertEquals(value, h2.get(GetRequest.newBuilder().setKey(h2Key).build()).getValue(), "the gRPC client is served");
    }

    /** Bytes of slab buffers the server holds now. */
    long heldBytes() {
        return pool.inUseBytes();
    }

    /** The most slab bytes the server has held at once since it started (a fresh server per test). */
    long peakHeldBytes() {
        return pool.peakInUseBytes();
    }

    /** Live platform threads of this JVM (virtual threads are not counted: they cost no OS thread). */
    static int platformThreads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    /** Checks that the server started no platform thread per stalled stream since {@code before} were counted. */
    static void assertNoThreadPerStream(int before) {
        int now = platformThreads();
        System.out.printf("platform threads: %d before the attack, %d during it%n", before, now);
        assertTrue(now <= before + THREAD_SLACK, "no platform thread per stalled stream: " + before + " -> " + now);
    }

    /** Prints what the server held under {@code attack} (for the report) and checks it against {@code bound}. */
    static void assertHeld(String attack, long held, long bound) {
        System.out.printf("%s: the server holds %,d slab bytes (bound %,d)%n", attack, held, bound);
        assertTrue(held <= bound, attack + ": held " + held + " bytes, bound " + bound);
    }

    double counter(String name, String... tags) {
        Counter c = meters.find(name).tags(tags).counter();
        return c == null ? 0 : c.count();
    }

    /** One round of an attack, on a connection of its own; throws if a bound it checks does not hold. */
    interface Round {
        void run() throws Exception;
    }

    /**
     * Runs {@code round} over and over on another thread, each on a fresh connection, while the good clients make
     * their calls: the first round has ended before they start and another one after they are done, so the attack
     * ran throughout. Returns how many rounds ran; a round's failure fails the test.
     */
    int goodClientsServedWhile(Round round) throws Exception {
        AtomicInteger rounds = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread attacker = new Thread(() -> {
            try {
                while (!stop.get()) {
                    round.run();
                    rounds.incrementAndGet();
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "attacker");
        attacker.start();
        try {
            Await.until(() -> rounds.get() >= 1 || failure.get() != null, "the first round of the attack ended");
            rethrow(failure.get());
            int before = rounds.get();
            goodClientsServed();
            goodClientsServed();
            Await.until(() -> rounds.get() > before + 1 || failure.get() != null,
                    "a round of the attack that started during the good clients' calls ended");
            rethrow(failure.get());
        } finally {
            stop.set(true);
            attacker.join(TimeUnit.SECONDS.toMillis(120));
        }
        rethrow(failure.get());
        return rounds.get();
    }

    private static void rethrow(Throwable t) throws Exception {
        if (t instanceof Exception e) {
            throw e;
        }
        if (t instanceof Error e) {
            throw e;
        }
    }

    /** Waits until the server holds no more than it did with only the good clients connected. */
    void awaitHeldBackTo(long bytes) {
        Await.until(() -> heldBytes() <= bytes, () -> "the server's held bytes back to " + bytes + ", not " + heldBytes()
                + ":\n" + pool.describeLiveBuffers());
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        if (server == null) {
            return; // beforeEach failed to start it
        }
        grpc.shutdownNow();
        channel.shutdownNow();
        grpc.awaitTermination(60, TimeUnit.SECONDS);
        channel.awaitTermination(60, TimeUnit.SECONDS);
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
        Await.until(() -> pool.inUseBuffers() == 0, () -> "every server buffer released:\n" + pool.describeLiveBuffers());
    }
}
