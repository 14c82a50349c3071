package dev.rdmarpc.samples.kv;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import dev.rdmarpc.core.testing.RawFrameClient;
import dev.rdmarpc.health.HealthService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Eight attacking connections, each filling every stream with the start of a Put it never finishes, against the KV
 * sample server (4 MiB requests, RpcServer's default): a well-behaved client on a new connection is still served, and
 * the server's memory, measured by its own slab pool, stays within what PROTOCOL.md "Limits" says: each connection
 * within its bound, and over the memory budget the connections over their share are the ones refused.
 */
class FairMemoryTest {
    private static final int ATTACKERS = 8;
    private static final int STREAMS = 100;
    private static final String PUT = "rdmarpc.samples.kv.KeyValue/Put";
    /** The connection window of the sample's defaults: raised to its largest request (ServerImpl.setConnectionWindow). */
    private static final long WINDOW = ((long) KvServer.DEFAULT_MAX_MESSAGE_MIB << 20) + 8;
    /** PROTOCOL.md's bound per connection, 2 × (W + Q + U) + F, and 1 MiB for streams and tables. */
    private static final long PER_CONNECTION = 2L * (WINDOW + (6 << 20) + (2 << 20) + (256 << 10)) + (2 << 20);

    private final SlabPool serverPool = new SlabPool(0, false, 0);
    private final List<RawFrameClient> attackers = new ArrayList<>();
    private RpcServer server;
    private RpcChannel channel;
    private long baseline;

    private void start(UnaryOperator<RpcServer.Builder> config) throws IOException {
        server = config.apply(KvServer.builder(0, new KeyValueStore(), new HealthService(), KvServer.DEFAULT_MAX_MESSAGE_MIB)
                .slabPool(serverPool))
                .build().start();
        baseline = serverPool.inUseBytes();
    }

    @AfterEach
    void stop() throws Exception {
        for (RawFrameClient a : attackers) {
            a.close();
        }
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    /** Opens the attacking connections: on each stream the first 2 MiB (a stream window) of a 16 MiB Put. */
    private void attack() throws IOException {
        for (int a = 0; a < ATTACKERS; a++) {
            RawFrameClient attacker = new RawFrameClient(server.getPort(), 1 << 20, null, true);
            attackers.add(attacker);
            for (int i = 0; i < STREAMS; i++) {
                int stream = 1 + 2 * i;
                attacker.write(RawFrameClient.headers(stream, PUT),
                        RawFrameClient.begin(stream, 0, (16 << 20) - 16, (1 << 20) - 4),
                        RawFrameClient.more(stream, 0, 1 << 20));
            }
        }
        for (RawFrameClient a : attackers) {
            a.sync();
        }
    }

    /** A Put and a Get on a new connection are answered. */
    private void assertGoodClientServed() {
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
        KeyValueRpc.KeyValueBlockingStub kv = KeyValueRpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        ByteString key = ByteString.copyFromUtf8("good");
        ByteString value = ByteString.copyFrom(new byte[64 << 10]);
        assertEquals(1, kv.put(PutRequest.newBuilder().setKey(key).setValue(value).build()).getVersion());
        assertEquals(value, kv.get(GetRequest.newBuilder().setKey(key).build()).getValue());
    }

    private long refusedWith(String words) {
        return attackers.stream().flatMap(a -> a.trailers().stream())
                .filter(t -> t.status().getCode() == Status.Code.RESOURCE_EXHAUSTED && t.status().getDescription().contains(words))
                .count();
    }

    @Test
    void eightAttackersFillingEveryStreamLeaveAGoodClientServedWithTheDefaultBudget() throws Exception {
        start(b -> b);
        attack();
        assertGoodClientServed();
        long peak = serverPool.peakInUseBytes() - baseline;
        assertTrue(peak <= ATTACKERS * PER_CONNECTION + (8 << 20), "each connection within its bound: peak "
                + (peak >> 20) + " MiB for " + ATTACKERS + " attackers");
        assertTrue(peak <= RpcServer.DEFAULT_MEMORY_BUDGET, "within the budget: " + (peak >> 20) + " MiB");
        assertTrue(refusedWith("window") > 0, "the attackers' calls past their windows were refused");
        closeAttackersAndAwaitRelease();
    }

    @Test
    void overTheBudgetTheConnectionsOverTheirShareAreRefusedAndAGoodClientIsServed() throws Exception {
        long budget = 48 << 20; // less than the attackers' windows together: the share decides
        start(b -> b.memoryBudget(budget));
        attack();
        assertTrue(serverPool.inUseBytes() > budget, "the attackers took the server over its budget: " + serverPool.inUseBytes());
        assertTrue(refusedWith("more than its share") > 0, "calls of connections over their share were refused");
        assertGoodClientServed();
        long peak = serverPool.peakInUseBytes() - baseline;
        long overhead = (ATTACKERS + 1) * WINDOW; // a message per connection past its share
        assertTrue(peak <= 2 * (budget + overhead), "within twice (the budget plus a message per connection): "
                + (peak >> 20) + " MiB");
        closeAttackersAndAwaitRelease();
    }

    private void closeAttackersAndAwaitRelease() throws IOException {
        for (RawFrameClient a : attackers) {
            a.close();
        }
        attackers.clear();
        channel.shutdownNow();
        channel = null;
        Await.until(() -> serverPool.inUseBytes() <= baseline, () -> "the server released what the attackers held: "
                + serverPool.inUseBytes() + " bytes in use, " + baseline + " before");
    }
}
