package dev.rdmarpc.samples.kv;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Trailers;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP/2 denial-of-service families, mapped onto rdmarpc's own protocol, against the KV sample server with its
 * defaults: each attack is bounded in the work the server does per frame (a count: frames answered before the
 * connection closed, within the control-frame budget), in what it holds (its slab pool's bytes in use) and in
 * threads (no platform thread per stalled stream), and the well-behaved clients on other connections are served
 * while it runs. The HTTP/2 side of each family is {@link HostileH2ClientsTest}.
 */
class HostileClientsTest {
    /** The default control-frame budget (PROTOCOL.md, "Control frames"): a burst of 10,000, then 1,000 a second. */
    private static final int BURST = 10_000;
    private static final int PER_SECOND = 1_000;
    private static final int STREAMS = KvUnderAttack.STREAMS;
    /** The default metadata limit per HEADERS. */
    private static final int METADATA_LIMIT = 8 * 1024;

    @RegisterExtension
    final KvUnderAttack kv = new KvUnderAttack();

    private static byte[] concat(List<byte[]> parts) {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        parts.forEach(b::writeBytes);
        return b.toByteArray();
    }

    private static byte[] getRequest(String key) {
        return GetRequest.newBuilder().setKey(ByteString.copyFromUtf8(key)).build().toByteArray();
    }

    // ------------------------------------------------------------------ floods charged to the control-frame budget

    /** What one flood round measured: PING ACKs read and the time from the connect to the close. */
    private record Flood(int acks, long elapsedNanos) {
        /** Charged frames the budget allows in this time: the burst plus the refill, rounded up to the next second. */
        long allowed() {
            return BURST + PER_SECOND * (TimeUnit.NANOSECONDS.toSeconds(elapsedNanos) + 1);
        }
    }

    /**
     * Writes {@code chunks} copies of {@code chunk} followed each by a PING on another thread and reads what the
     * server answers until it closes the connection (or has answered every PING: it handled the whole flood). Every
     * PING ACK read says the server handled what came before it; {@code acksPerChunk} are due per chunk.
     */
    private static Flood flood(RawKvConnection c, long startNanos, byte[] chunk, int chunks, int acksPerChunk) throws Exception {
        Thread writer = new Thread(() -> {
            for (int i = 0; i < chunks && c.tryWrite(chunk, RawKvConnection.ping(i)); i++) {
                // until the flood is written or the server has closed the connection
            }
        }, "flood-writer");
        writer.start();
        int acks = 0;
        long due = (long) chunks * acksPerChunk;
        while (acks < due) {
            RawKvConnection.Frame f = c.read();
            if (f == null) {
                break;
            }
            if (f.type() == FrameType.PING) {
                acks++;
            }
        }
        long elapsed = System.nanoTime() - startNanos;
        writer.join();
        return new Flood(acks, elapsed);
    }

    /**
     * Runs flood rounds of {@code frame} (after {@code opening}) while the good clients are served; checks that the
     * server closed each flooding connection before it had handled more charged frames than the budget allows.
     * {@code framesPerAck}: the charged frames handled per PING ACK read (the PING itself included).
     */
    private void floodIsCutOff(String what, byte[] opening, byte[] frame, int framesPerAck) throws Exception {
        int perChunk = 1_000;
        int chunks = 200; // 200,000 charged frames: far past what the budget allows in any plausible time
        double closedBefore = kv.counter("rdmarpc.server.connections.closed", "reason", "control-frames");
        List<Long> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
        kv.goodClientsServedWhile(() -> {
            long start = System.nanoTime();
            try (RawKvConnection c = RawKvConnection.open(kv.port(), 1 << 20)) {
                if (opening.length > 0) {
                    c.write(opening);
                }
                Flood f = flood(c, start, RawKvConnection.repeat(frame, perChunk), chunks, framesPerAck == 1 ? perChunk + 1 : 1);
                long charged = (long) f.acks() * framesPerAck;
                handled.add(charged);
                assertTrue(charged < (long) chunks * (perChunk + 1), what + ": the server handled the whole flood");
                assertTrue(charged <= f.allowed(), what + ": " + charged + " charged frames handled in "
                        + TimeUnit.NANOSECONDS.toMillis(f.elapsedNanos()) + " ms, the budget allows " + f.allowed());
            }
        });
        System.out.printf("%s: charged frames handled before the close, per round: %s%n", what, handled);
        Await.until(() -> kv.counter("rdmarpc.server.connections.closed", "reason", "control-frames") > closedBefore,
                "the flooding connections were closed by the control-frame budget");
    }

    @Test
    void aPingFloodIsCutOffByTheControlFrameBudget() throws Exception {
        floodIsCutOff("PING flood", new byte[0], RawKvConnection.ping(7), 1);
    }

    @Test
    void aResetFloodOfLateCancelsIsCutOffByTheControlFrameBudget() throws Exception {
        // stream 1 is a Get that has ended (NOT_FOUND); CANCELs for it are late, two free, the rest charged
        floodIsCutOff("late CANCEL flood", concat(List.of(RawKvConnection.headers(1, RawKvConnection.GET, null),
                RawKvConnection.message(1, getRequest("absent"), true))), RawKvConnection.cancel(1), 1_001);
    }

    @Test
    void anEmptyFrameFloodIsCutOffByTheControlFrameBudget() throws Exception {
        // a BatchPut with a message begun: empty continuations of it move nothing forward
        floodIsCutOff("empty MESSAGE flood", concat(List.of(RawKvConnection.headers(1, RawKvConnection.BATCH_PUT, null),
                RawKvConnection.messageStart(1, 10, new byte[1]))), RawKvConnection.messageMore(1, new byte[0]), 1_001);
    }

    @Test
    void aConnectionWindowFloodIsCutOffByTheControlFrameBudget() throws Exception {
        floodIsCutOff("WINDOW-on-stream-0 flood", new byte[0], RawKvConnection.window(0, 1), 1_001);
    }

    @Test
    void aGoAwayFloodIsCutOffByTheControlFrameBudget() throws Exception {
        floodIsCutOff("GOAWAY flood", new byte[0], RawKvConnection.goAway(), 1_001);
    }

    // ------------------------------------------------------------------ SETTINGS: HELLO again, capabilities

    @Test
    void aSecondHelloClosesTheConnectionBeforeAnythingElseIsHandled() throws Exception {
        kv.goodClientsServedWhile(() -> {
            try (RawKvConnection c = RawKvConnection.open(kv.port(), 1 << 20)) {
                c.write(RawKvConnection.hello(1 << 20, Map.of()), RawKvConnection.ping(1));
                assertNull(c.readUntil(f -> f.type() == FrameType.PING), "the PING after the second HELLO was not answered");
            }
        });
        Await.until(() -> kv.closeReasons.stream().anyMatch(r -> r.contains("second HELLO")), () -> "closed: " + kv.closeReasons);
    }

    /** A HELLO payload with these (id, length) capability blocks, zero-filled, written by hand: ids may repeat. */
    private static byte[] helloWithCapabilities(int[][] blocks) {
        int size = 22;
        for (int[] b : blocks) {
            size += 4 + b[1];
        }
        ByteBuffer p = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(dev.rdmarpc.core.protocol.Hello.MAGIC).putShort((short) 1).putShort((short) 0).putInt(1 << 20).putInt(1 << 20)
                .putInt(64 << 20).putShort((short) blocks.length);
        for (int[] b : blocks) {
            p.putShort((short) b[0]).putShort((short) b[1]).put(new byte[b[1]]);
        }
        return RawKvConnection.frame(FrameType.HELLO, 0, 0, 0, p.array());
    }

    @Test
    void capabilitiesGivenTwiceCloseTheConnectionAndUnknownOnesCostOneHello() throws Exception {
        kv.goodClientsServedWhile(() -> {
            try (RawKvConnection twice = new RawKvConnection(kv.port(), 0)) {
                twice.write(helloWithCapabilities(new int[][]{{99, 4}, {99, 4}}), RawKvConnection.ping(1));
                assertNull(twice.readUntil(f -> f.type() == FrameType.HELLO || f.type() == FrameType.PING),
                        "a HELLO with a capability given twice is answered by the close");
            }
            // as many unknown capabilities as the 16 KiB first frame holds: ignored, the connection serves calls
            int[][] unknown = new int[1_000][];
            for (int i = 0; i < unknown.length; i++) {
                unknown[i] = new int[]{1_000 + i, 12};
            }
            try (RawKvConnection many = new RawKvConnection(kv.port(), 0)) {
                many.write(helloWithCapabilities(unknown));
                assertNotNull(many.readUntil(f -> f.type() == FrameType.HELLO), "the server answers the HELLO");
                assertTrue(many.sync(2), "and the connection carries on");
            }
        });
    }

    // ------------------------------------------------------------------ rapid reset

    @Test
    void rapidResetCostsTheServerNoAnswerAndLeavesNothingBehind() throws Exception {
        int threads = KvUnderAttack.platformThreads();
        long held = kv.heldBytes();
        int streams = 20_000;
        kv.goodClientsServedWhile(() -> {
            try (RawKvConnection c = RawKvConnection.open(kv.port(), 1 << 20)) {
                List<byte[]> batch = new ArrayList<>();
                for (int id = 1; id < 2 * streams; id += 2) {
                    // BatchPut: the one KV method whose handler starts at HEADERS (the others wait for their request)
                    batch.add(RawKvConnection.headers(id, RawKvConnection.BATCH_PUT, null));
                    batch.add(RawKvConnection.cancel(id));
                    if (batch.size() == 2_000) {
                        c.write(concat(batch));
                        batch.clear();
                    }
                }
                c.write(RawKvConnection.ping(1));
                List<RawKvConnection.Frame> answers = new ArrayList<>();
                assertNotNull(c.readUntil(f -> f.isPingAck(1) || !answers.add(f)), "the connection stays open: "
                        + answers.size() + " frames before the PING's ACK");
                assertTrue(answers.isEmpty(), "no stream reset by its client is answered: " + answers.size() + " frames");
                // every odd id up to the last one was opened: the next stream is served
                int next = 2 * streams + 1;
                c.write(RawKvConnection.headers(next, RawKvConnection.GET, null),
                        RawKvConnection.message(next, getRequest("absent"), true));
                RawKvConnection.Frame t = c.readUntil(f -> f.type() == FrameType.TRAILERS);
                assertNotNull(t);
                assertEquals(Status.Code.NOT_FOUND, t.trailers().status().getCode());
            }
        });
        Await.until(() -> kv.meters.get("rdmarpc.server.calls.active").gauge().value() == 0,
                "every reset call ended at the server");
        kv.awaitHeldBackTo(held);
        KvUnderAttack.assertNoThreadPerStream(threads);
    }

    @Test
    void streamsRefusedAtOnceCostOneTrailersEach() throws Exception {
        // the server-side resets of HTTP/2 ("MadeYouReset"): HEADERS the server must refuse, answered by TRAILERS alone
        int streams = 5_000;
        kv.goodClientsServedWhile(() -> {
            try (RawKvConnection c = RawKvConnection.open(kv.port(), 1 << 20)) {
                List<byte[]> batch = new ArrayList<>();
                for (int id = 1; id < 2 * streams; id += 2) {
                    batch.add(RawKvConnection.headers(id, "no.Such/Method", null));
                }
                c.write(concat(batch), RawKvConnection.ping(1));
                int[] trailers = {0};
                assertNotNull(c.readUntil(f -> f.isPingAck(1) || f.type() == FrameType.TRAILERS && ++trailers[0] < 0));
                assertEquals(streams, trailers[0], "one TRAILERS (UNIMPLEMENTED) per stream, nothing more");
            }
        });
    }

    // ------------------------------------------------------------------ header floods

    @Test
    void metadataJustUnderTheLimitOnEveryStreamIsBoundedAndTheStreamsBeyondAreRefused() throws Exception {
        int threads = KvUnderAttack.platformThreads();
        long base = kv.heldBytes();
        Metadata md = new Metadata().put(Metadata.Key.ascii("x-filler"), "f".repeat(METADATA_LIMIT - 32 - "x-filler".length()));
        try (RawKvConnection c = RawKvConnection.open(kv.port(), 1 << 20)) {
            int refused = 900;
            List<byte[]> all = new ArrayList<>();
            for (int id = 1; id < 2 * (STREAMS + refused); id += 2) {
                all.add(RawKvConnection.headers(id, RawKvConnection.PUT, md)); // a Put whose request never comes
            }
            c.write(concat(all), RawKvConnection.ping(1));
            List<Trailers> answers = new ArrayList<>();
            assertNotNull(c.readUntil(f -> f.isPingAck(1) || f.type() == FrameType.TRAILERS && !answers.add(f.trailers())));
            assertEquals(refused, answers.size(), "every stream beyond the 100 allowed is refused");
            assertTrue(answers.stream().allMatch(t -> t.status().getCode() == Status.Code.UNAVAILABLE), answers::toString);
            long held = kv.heldBytes() - base;
            // the decoded metadata is on the heap (at most the limit per stream); the slab pool holds only frames in reading
            long bound = STREAMS * (4L * METADATA_LIMIT) + (2 << 20);
            KvUnderAttack.assertHeld(String.format("metadata just under the limit on %d streams", STREAMS), held, bound);
            KvUnderAttack.assertNoThreadPerStream(threads);
            kv.goodClientsServed();
        }
        kv.awaitHeldBackTo(base);
    }

    @Test
    void hugeMetadataIsRefusedStreamByStreamAndHoldsAtMostOneFrame() throws Exception {
        long base = kv.heldBytes();
        Metadata md = new Metadata().put(Metadata.Key.ascii("x-huge"), "h".repeat((1 << 20) - 1024));
        kv.goodClientsServedWhile(() -> {
            try (RawKvConnection c = RawKvConnection.open(kv.port(), 1 << 20)) {
                for (int id = 1; id < 2 * 50; id += 2) {
                    c.write(RawKvConnection.headers(id, RawKvConnection.PUT, md));
                }
                c.write(RawKvConnection.ping(1));
                List<Trailers> answers = new ArrayList<>();
                assertNotNull(c.readUntil(f -> f.isPingAck(1) || f.type() == FrameType.TRAILERS && !answers.add(f.trailers())));
                assertEquals(50, answers.size());
                assertTrue(answers.stream().allMatch(t -> t.status().getCode() == Status.Code.RESOURCE_EXHAUSTED), answers::toString);
                assertTrue(kv.heldBytes() - base <= (2 << 20), "at most the frame being read: " + (kv.heldBytes() - base));
            }
        });
        kv.awaitHeldBackTo(base);
    }

    // ------------------------------------------------------------------ data dribble (slowloris)

    @Test
    void aDribbleOfOneBytePerStreamHoldsAFewKibPerStreamAndNoThread() throws Exception {
        int threads = KvUnderAttack.platformThreads();
        long base = kv.heldBytes();
        try (RawKvConnection c = RawKvConnection.open(kv.port(), 1 << 20)) {
            List<byte[]> opening = new ArrayList<>();
            for (int id = 1; id < 2 * STREAMS; id += 2) {
                // a Put announcing a 16 MiB request (within the sample's 64 MiB) of which one byte arrives
                opening.add(RawKvConnection.headers(id, RawKvConnection.PUT, null));
                opening.add(RawKvConnection.messageStart(id, 16 << 20, new byte[]{0x0a}));
            }
            c.write(concat(opening));
            long peak = 0;
            for (int round = 1; round <= 4; round++) {
                List<byte[]> more = new ArrayList<>();
                for (int id = 1; id < 2 * STREAMS; id += 2) {
                    more.add(RawKvConnection.messageMore(id, new byte[]{(byte) round}));
                }
                c.write(concat(more));
                List<RawKvConnection.Frame> answers = new ArrayList<>();
                assertNotNull(syncAndCollect(c, round, answers), "the connection stays open");
                assertTrue(answers.isEmpty(), "no stream is refused or answered: " + answers);
                peak = Math.max(peak, kv.heldBytes() - base);
                kv.goodClientsServed();
            }
            long bound = STREAMS * (8L << 10) + (2 << 20);
            KvUnderAttack.assertHeld(String.format("one byte at a time on %d streams", STREAMS), peak, bound);
            KvUnderAttack.assertNoThreadPerStream(threads);
        }
        kv.awaitHeldBackTo(base);
    }

    /** Sends PING {@code data} and reads until its ACK (returned; null if the server closed first), collecting the rest. */
    private static RawKvConnection.Frame syncAndCollect(RawKvConnection c, long data, List<RawKvConnection.Frame> answers)
            throws IOException {
        c.write(RawKvConnection.ping(data));
        return c.readUntil(f -> f.isPingAck(data) || !answers.add(f));
    }

    @Test
    void aWindowOfOneByteAtATimeGetsNoMoreFramesThanItGrants() throws Exception {
        kv.store.put(ByteString.copyFromUtf8("big"), ByteString.copyFrom(new byte[64 << 10]));
        int grants = 2_000;
        kv.goodClientsServedWhile(() -> {
            // a 5-byte window per stream: room for a message's first frame (its 4-byte length and one byte), no more
            try (RawKvConnection c = RawKvConnection.open(kv.port(), 5)) {
                c.write(RawKvConnection.headers(1, RawKvConnection.GET, null), RawKvConnection.message(1, getRequest("big"), true));
                assertNotNull(c.readUntil(f -> f.type() == FrameType.MESSAGE), "the response starts within the window");
                c.write(RawKvConnection.repeat(RawKvConnection.window(1, 1), grants));
                List<RawKvConnection.Frame> answers = new ArrayList<>();
                assertNotNull(syncAndCollect(c, 1, answers), "the connection stays open");
                long frames = answers.stream().filter(f -> f.type() == FrameType.MESSAGE).count();
                long bytes = answers.stream().filter(f -> f.type() == FrameType.MESSAGE).mapToLong(f -> f.payload().length).sum();
                assertTrue(frames <= grants && bytes <= grants, grants + " one-byte grants answered by " + frames + " frames of "
                        + bytes + " bytes");
            }
            try (RawKvConnection c = RawKvConnection.open(kv.port(), 1 << 20)) {
                c.write(RawKvConnection.headers(1, RawKvConnection.BATCH_PUT, null), RawKvConnection.window(1, 0),
                        RawKvConnection.ping(1));
                assertNull(c.readUntil(f -> f.type() == FrameType.PING), "a WINDOW granting nothing closes the connection");
            }
        });
    }

    // ------------------------------------------------------------------ slow reading of large responses

    /**
     * Asks for {@code streams} responses (all at once, with the largest window there is) and never reads them; returns
     * the most slab bytes the server held meanwhile. Waits until the handlers have produced at least {@code atLeast}
     * bytes (queued or handed to the transport), which the server reaches before its send bound stops them.
     */
    private long heldForAReaderThatNeverReads(int streams, java.util.function.IntFunction<byte[]> request, long atLeast)
            throws Exception {
        long base = kv.heldBytes();
        int threads = KvUnderAttack.platformThreads();
        double sentBefore = kv.counter("rdmarpc.server.bytes.sent");
        try (RawKvConnection c = new RawKvConnection(kv.port(), 16 << 10)) {
            c.handshake(Integer.MAX_VALUE);
            List<byte[]> all = new ArrayList<>();
            for (int i = 0; i < streams; i++) {
                all.add(request.apply(2 * i + 1));
            }
            c.write(concat(all));
            Await.until(() -> kv.counter("rdmarpc.server.bytes.sent") - sentBefore + kv.heldBytes() - base >= atLeast,
                    () -> "the handlers produced " + atLeast + " bytes, not yet: sent "
                            + (kv.counter("rdmarpc.server.bytes.sent") - sentBefore) + ", held " + (kv.heldBytes() - base));
            kv.goodClientsServed();
            KvUnderAttack.assertNoThreadPerStream(threads);
            return kv.peakHeldBytes() - base;
        } finally {
            kv.awaitHeldBackTo(base);
        }
    }

    /** Bytes a server's send side may hold for one connection (PROTOCOL.md "Limits": Q and U, in power-of-two blocks). */
    private static final long SEND_SIDE_BOUND = 2 * ((8L << 20) + (4L << 20) + (256L << 10));

    @Test
    void streamingResponsesToAClientThatNeverReadsHoldTheConnectionsSendBound() throws Exception {
        int value = 256 << 10;
        for (int i = 0; i < 16; i++) {
            kv.store.put(ByteString.copyFromUtf8(String.format("scan/%02d", i)), ByteString.copyFrom(new byte[value]));
        }
        byte[] scan = ScanRequest.newBuilder().setStart(ByteString.copyFromUtf8("scan/")).setEnd(ByteString.copyFromUtf8("scan0"))
                .build().toByteArray();
        // the server queues responses until the connection's queue (8 MiB) is full, so it produces at least that much
        long held = heldForAReaderThatNeverReads(STREAMS, id -> concat(List.of(RawKvConnection.headers(id, RawKvConnection.SCAN, null),
                RawKvConnection.message(id, scan, true))), 8L << 20);
        long bound = SEND_SIDE_BOUND;
        KvUnderAttack.assertHeld(String.format("Scan on %d streams never read", STREAMS), held, bound);
    }

    @Test
    void largeUnaryResponsesToAClientThatNeverReadsHoldAtMostTheConnectionBound() throws Exception {
        int value = 16 << 20;
        int streams = 8;
        kv.store.put(ByteString.copyFromUtf8("big"), ByteString.copyFrom(new byte[value]));
        // one response is serialized at once (a handler waits for room in the connection's queue before it serializes)
        long held = heldForAReaderThatNeverReads(streams, id -> concat(List.of(RawKvConnection.headers(id, RawKvConnection.GET, null),
                RawKvConnection.message(id, getRequest("big"), true))), value);
        long bound = 64L << 20;
        KvUnderAttack.assertHeld(String.format("Get of %d MiB on %d streams never read", value >> 20, streams), held, bound);
    }
}
