package dev.rdmarpc.samples.kv;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.testing.Await;
import io.netty.handler.codec.http2.Http2Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP/2 denial-of-service families as a hostile gRPC-over-HTTP/2 client plays them against the KV sample
 * server with its defaults (its port serves HTTP/2 beside rdmarpc's protocol): each is bounded in the frames the
 * server handles before it ends the connection, in what it holds (its slab pool's bytes in use) and in threads, and
 * the well-behaved rdmarpc and gRPC clients on other connections are served while it runs. The rdmarpc side of each
 * family is {@link HostileClientsTest}.
 */
class HostileH2ClientsTest {
    private static final int STREAMS = KvUnderAttack.STREAMS;
    private static final int REFUSED_STREAM = 0x7;
    /** RST_STREAM frames a client may send per 30 s (transport-tcp's H2Codecs). */
    private static final int MAX_RSTS = 200;

    @RegisterExtension
    final KvUnderAttack kv = new KvUnderAttack();

    private static byte[] get(String key) {
        return RawH2Connection.grpcMessage(GetRequest.newBuilder().setKey(ByteString.copyFromUtf8(key)).build().toByteArray());
    }

    /**
     * Reads until the server closes the connection and checks that it ended it with GOAWAY {@code error} if that GOAWAY
     * is read: a server that closes while the client's flood is still arriving resets the connection, and the reset may
     * discard its GOAWAY (and the frames before it) before they are read. Returns the frames read.
     */
    private static List<RawH2Connection.Frame> endedWith(RawH2Connection c, int error) throws IOException {
        List<RawH2Connection.Frame> frames = new ArrayList<>();
        assertNull(c.readUntil(f -> !frames.add(f)), "the server ends the connection");
        Optional<RawH2Connection.Frame> g = frames.stream().filter(f -> f.type() == RawH2Connection.GOAWAY).findFirst();
        if (g.isPresent()) {
            assertEquals(error, g.get().goAwayError(), "GOAWAY's error code");
        }
        return frames;
    }

    /** A flood written (not flushed) on a fresh connection. */
    private interface Flood {
        void write(RawH2Connection c);
    }

    /**
     * Rounds of {@code flood} while the good clients are served: each flooding connection ends with ENHANCE_YOUR_CALM.
     * Returns the frames the server sent on each before it ended it.
     */
    private List<List<RawH2Connection.Frame>> floodsEndWithEnhanceYourCalm(Flood flood) throws Exception {
        List<List<RawH2Connection.Frame>> answers = new java.util.concurrent.CopyOnWriteArrayList<>();
        kv.goodClientsServedWhile(() -> {
            try (RawH2Connection c = RawH2Connection.open(kv.port())) {
                flood.write(c);
                c.tryFlush(); // the server may end the connection while the flood is being written
                answers.add(endedWith(c, RawH2Connection.ENHANCE_YOUR_CALM));
            }
        });
        return answers;
    }

    private static long count(List<RawH2Connection.Frame> frames, Predicate<RawH2Connection.Frame> which) {
        return frames.stream().filter(which).count();
    }

    private double callsStarted(String method) {
        return kv.counter("rdmarpc.server.calls.started", "method", "rdmarpc.samples.kv.KeyValue/" + method);
    }

    // ------------------------------------------------------------------ resets

    @Test
    void rapidResetEndsTheConnectionWithinTheResetBudget() throws Exception {
        int streams = 2_000;
        List<Double> started = new java.util.concurrent.CopyOnWriteArrayList<>();
        kv.goodClientsServedWhile(() -> {
            double before = callsStarted("BatchPut");
            try (RawH2Connection c = RawH2Connection.open(kv.port())) {
                for (int id = 1; id < 2 * streams && c.tryFlush(); id += 2) {
                    c.headers(id, RawH2Connection.request("BatchPut"), false).rst(id);
                }
                endedWith(c, RawH2Connection.ENHANCE_YOUR_CALM);
            }
            started.add(callsStarted("BatchPut") - before);
        });
        System.out.println("rapid reset over HTTP/2: calls core started per connection before the close " + started);
        // Netty's decoder ends the connection at the 201st RST_STREAM within 30 s: the streams whose HEADERS came before it
        assertTrue(started.stream().allMatch(n -> n <= MAX_RSTS + 1), "core started at most " + (MAX_RSTS + 1)
                + " calls per connection: " + started);
    }

    @Test
    void streamErrorsTheClientProvokesEndTheConnectionWithinTheResetBudget() throws Exception {
        // "MadeYouReset": a WINDOW_UPDATE of 0 on an open stream makes the server reset it (a stream error); the
        // server's own RST_STREAMs count against the same budget as the client's
        int streams = 2_000;
        List<Long> resets = new java.util.concurrent.CopyOnWriteArrayList<>();
        kv.goodClientsServedWhile(() -> {
            try (RawH2Connection c = RawH2Connection.open(kv.port())) {
                for (int id = 1; id < 2 * streams && c.tryFlush(); id += 2) {
                    c.headers(id, RawH2Connection.request("BatchPut"), false).windowUpdate(id, 0);
                }
                List<RawH2Connection.Frame> frames = endedWith(c, RawH2Connection.ENHANCE_YOUR_CALM);
                long n = count(frames, f -> f.type() == RawH2Connection.RST_STREAM);
                resets.add(n);
                assertTrue(n <= MAX_RSTS + 1, n + " streams reset by the server before it ended the connection");
            }
        });
        System.out.println("server-side resets over HTTP/2: RST_STREAMs read per connection before the close " + resets);
    }

    // ------------------------------------------------------------------ PING, SETTINGS, empty frames

    @Test
    void aPingFloodIsTooManyPingsAfterTwoAnswers() throws Exception {
        for (List<RawH2Connection.Frame> answers : floodsEndWithEnhanceYourCalm(c -> {
            for (int i = 0; i < 1_000; i++) {
                c.ping(i);
            }
        })) {
            long acks = count(answers, f -> f.type() == RawH2Connection.PING);
            assertTrue(acks <= 3, acks + " PINGs answered before too_many_pings");
        }
    }

    @Test
    void aSettingsFloodFromAClientThatDoesNotReadEndsTheConnection() throws Exception {
        kv.goodClientsServedWhile(() -> {
            try (RawH2Connection c = new RawH2Connection(kv.port(), new Http2Settings(), 16 << 10)) {
                byte[] settings = {0, 0, 0, RawH2Connection.SETTINGS, 0, 0, 0, 0, 0};
                byte[] batch = new byte[settings.length * 10_000];
                for (int i = 0; i < 10_000; i++) {
                    System.arraycopy(settings, 0, batch, i * settings.length, settings.length);
                }
                assertThrows(IOException.class, () -> {
                    for (int i = 0; i < 10_000; i++) { // at most 100 million frames: a bound for a broken server only
                        c.writeRaw(batch);
                    }
                }, "the server ends the connection once its unread answers pile up");
            }
        });
    }

    @Test
    void aSettingsFloodFromAClientThatReadsIsCutOffByTheSettingsBudget() throws Exception {
        int frames = 200_000; // far past what the budget allows in any plausible time
        List<Long> acked = new java.util.concurrent.CopyOnWriteArrayList<>();
        kv.goodClientsServedWhile(() -> {
            long start = System.nanoTime();
            try (RawH2Connection c = RawH2Connection.open(kv.port())) {
                Thread writer = new Thread(() -> {
                    boolean open = true;
                    for (int i = 0; i < frames / 1_000 && open; i++) {
                        for (int j = 0; j < 1_000; j++) {
                            c.settings();
                        }
                        open = c.tryFlush();
                    }
                }, "settings-writer");
                writer.start();
                List<RawH2Connection.Frame> answers = new ArrayList<>();
                assertNull(c.readUntil(f -> !answers.add(f)), "the server ends the connection");
                long elapsed = System.nanoTime() - start;
                writer.join();
                long acks = count(answers, RawH2Connection.Frame::isSettingsAck);
                acked.add(acks);
                // the budget (transport-tcp's SettingsBudget): a burst of 10,000, then 1,000 a second; the opening
                // SETTINGS counts too
                long allowed = 10_000 + 1_000 * (java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(elapsed) + 1);
                assertTrue(acks <= allowed, acks + " SETTINGS answered in " + elapsed / 1_000_000 + " ms; allowed " + allowed);
                answers.stream().filter(f -> f.type() == RawH2Connection.GOAWAY).findFirst().ifPresent(g -> {
                    assertEquals(RawH2Connection.ENHANCE_YOUR_CALM, g.goAwayError());
                    assertEquals("too_many_settings", g.goAwayDebug());
                });
            }
        });
        System.out.println("SETTINGS flood from a client that reads: SETTINGS answered per connection before the close " + acked);
    }

    @Test
    void anEmptyDataFloodEndsTheConnection() throws Exception {
        floodsEndWithEnhanceYourCalm(c -> {
            c.headers(1, RawH2Connection.request("BatchPut"), false);
            for (int i = 0; i < 1_000; i++) {
                c.data(1, new byte[0], false);
            }
        });
    }

    // ------------------------------------------------------------------ data dribble

    @Test
    void aDribbleOfOneBytePerStreamHoldsAFewKibPerStreamAndNoThread() throws Exception {
        int threads = KvUnderAttack.platformThreads();
        long base = kv.heldBytes();
        byte[] prefix = {0, 0, 0, 0, 0}; // uncompressed, 16 MiB
        java.nio.ByteBuffer.wrap(prefix, 1, 4).putInt(16 << 20);
        try (RawH2Connection c = RawH2Connection.open(kv.port())) {
            long peak = 0;
            for (int round = 0; round < 8; round++) {
                for (int id = 1; id < 2 * STREAMS; id += 2) {
                    if (round == 0) {
                        c.headers(id, RawH2Connection.request("Put"), false);
                    }
                    c.data(id, new byte[]{round < 5 ? prefix[round] : 0x0a}, false);
                }
                List<RawH2Connection.Frame> answers = new ArrayList<>();
                assertNotNull(c.sync(f -> f.type() != RawH2Connection.SETTINGS && f.type() != RawH2Connection.WINDOW_UPDATE
                        && answers.add(f)), "the connection stays open");
                assertTrue(answers.isEmpty(), "no stream is refused or answered: " + answers);
                peak = Math.max(peak, kv.heldBytes() - base);
                kv.goodClientsServed();
            }
            long bound = STREAMS * (8L << 10) + (2 << 20);
            KvUnderAttack.assertHeld(String.format("one byte at a time on %d HTTP/2 streams", STREAMS), peak, bound);
            KvUnderAttack.assertNoThreadPerStream(threads);
        }
        kv.awaitHeldBackTo(base);
    }

    @Test
    void aWindowOfOneByteAtATimeGetsNoMoreFramesThanItGrants() throws Exception {
        kv.store.put(ByteString.copyFromUtf8("big"), ByteString.copyFrom(new byte[64 << 10]));
        int grants = 2_000;
        kv.goodClientsServedWhile(() -> {
            try (RawH2Connection c = new RawH2Connection(kv.port(), new Http2Settings().initialWindowSize(1), 0)) {
                c.headers(1, RawH2Connection.request("Get"), false).data(1, get("big"), true).flush();
                assertNotNull(c.readUntil(f -> f.type() == RawH2Connection.DATA), "the response starts within the window");
                for (int i = 0; i < grants; i++) {
                    c.windowUpdate(1, 1);
                }
                List<RawH2Connection.Frame> answers = new ArrayList<>();
                assertNotNull(c.sync(f -> answers.add(f) || true), "the connection stays open");
                long frames = count(answers, f -> f.type() == RawH2Connection.DATA);
                long bytes = answers.stream().filter(f -> f.type() == RawH2Connection.DATA).mapToLong(f -> f.payload().length).sum();
                assertTrue(frames <= grants && bytes <= grants, grants + " one-byte grants answered by " + frames
                        + " DATA frames of " + bytes + " bytes");
            }
        });
    }

    // ------------------------------------------------------------------ header floods

    @Test
    void aContinuationFloodEndsTheConnection() throws Exception {
        floodsEndWithEnhanceYourCalm(c -> {
            c.frame(RawH2Connection.HEADERS, 1, 0, new byte[]{(byte) 0x83}); // :method POST, no END_HEADERS
            for (int i = 0; i < 10_000; i++) {
                c.frame(RawH2Connection.CONTINUATION, 1, 0, new byte[]{0x40, 1, 'x', 1, 'y'});
            }
        });
    }

    @Test
    void metadataJustUnderTheLimitOnEveryStreamIsBoundedAndTheStreamsBeyondAreRefused() throws Exception {
        int threads = KvUnderAttack.platformThreads();
        long base = kv.heldBytes();
        String filler = "f".repeat(8 * 1024 - 32 - "x-filler".length());
        try (RawH2Connection c = RawH2Connection.open(kv.port())) {
            // fewer than the 200 RST_STREAMs a connection may see in 30 s (the server's own count too: past them the
            // connection ends with ENHANCE_YOUR_CALM)
            int refused = 150;
            for (int id = 1; id < 2 * (STREAMS + refused); id += 2) {
                c.headers(id, RawH2Connection.request("Put").add("x-filler", filler), false); // the request never comes
            }
            c.flush();
            // refused by Netty's codec (RST_STREAM REFUSED_STREAM) once the client has acknowledged the server's
            // SETTINGS, which this one never does, otherwise by core (a trailers-only response, UNAVAILABLE): no
            // request has come, so any response that ends a stream is a refusal
            int[] refusals = {0};
            assertNotNull(c.readUntil(f -> (f.type() == RawH2Connection.RST_STREAM && java.nio.ByteBuffer.wrap(f.payload()).getInt()
                    == REFUSED_STREAM || f.type() == RawH2Connection.HEADERS && (f.flags() & 1) != 0) && ++refusals[0] == refused),
                    () -> "every stream beyond the 100 allowed is refused, and the connection stays open: " + refusals[0]);
            List<RawH2Connection.Frame> more = new ArrayList<>();
            assertNotNull(c.sync(more::add), "the connection stays open");
            assertEquals(0, count(more, f -> f.type() == RawH2Connection.RST_STREAM || f.type() == RawH2Connection.HEADERS),
                    "no other stream is refused or answered: " + more);
            long held = kv.heldBytes() - base;
            long bound = 2 << 20;
            KvUnderAttack.assertHeld(String.format("metadata just under the limit on %d HTTP/2 streams", STREAMS), held, bound);
            KvUnderAttack.assertNoThreadPerStream(threads);
            kv.goodClientsServed();
        }
        kv.awaitHeldBackTo(base);
    }

    // ------------------------------------------------------------------ slow reading of large responses

    @Test
    void largeResponsesToAClientThatNeverReadsHoldAtMostTheConnectionBound() throws Exception {
        int value = 16 << 20;
        int streams = 8;
        kv.store.put(ByteString.copyFromUtf8("big"), ByteString.copyFrom(new byte[value]));
        long base = kv.heldBytes();
        int threads = KvUnderAttack.platformThreads();
        double sentBefore = kv.counter("rdmarpc.server.bytes.sent");
        try (RawH2Connection c = new RawH2Connection(kv.port(), new Http2Settings().initialWindowSize(Integer.MAX_VALUE), 16 << 10)) {
            c.windowUpdate(0, Integer.MAX_VALUE - 65_535);
            for (int i = 0; i < streams; i++) {
                c.headers(2 * i + 1, RawH2Connection.request("Get"), false).data(2 * i + 1, get("big"), true);
            }
            c.flush();
            // one response is serialized at once (a handler waits for room in the connection's queue first)
            Await.until(() -> kv.counter("rdmarpc.server.bytes.sent") - sentBefore + kv.heldBytes() - base >= value,
                    () -> "a handler produced its response: sent " + (kv.counter("rdmarpc.server.bytes.sent") - sentBefore)
                            + ", held " + (kv.heldBytes() - base));
            kv.goodClientsServed();
            KvUnderAttack.assertNoThreadPerStream(threads);
            long held = kv.peakHeldBytes() - base;
            long bound = 64L << 20;
            KvUnderAttack.assertHeld(String.format("Get of %d MiB on %d HTTP/2 streams never read", value >> 20, streams), held, bound);
        }
        kv.awaitHeldBackTo(base);
    }
}
