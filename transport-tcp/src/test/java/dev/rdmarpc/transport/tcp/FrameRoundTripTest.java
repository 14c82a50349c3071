package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.spi.FrameConnection;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Frames through real loopback sockets and an echoing server, on every I/O flavor this host has. */
@ExtendWith(LeakCheck.class)
class FrameRoundTripTest {

    static List<String> flavors() {
        return TestTransports.flavors();
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void smallFramesComeBackIntactAndInOrder(String io) throws Exception {
        try (EchoLoop loop = new EchoLoop(io)) {
            RecordingHandler client = loop.connect();
            FrameConnection c = client.connection;
            assertEquals("tcp", c.transportName());
            assertEquals(loop.address.getPort(), ((InetSocketAddress) c.remoteAddress()).getPort());
            assertTrue(c.isOpen());
            assertFalse(c.inIoThread());

            c.send(TestFrames.hello());
            List<byte[]> sent = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                byte[] p = TestFrames.pattern(0, i, i * 5 % 1000);
                sent.add(p);
                c.send(TestFrames.frame(FrameType.MESSAGE, i % 2 == 0 ? 0x01 : 0x02, 1 + i, i * 3, p), null, true);
            }
            TestFrames.Frame hello = client.nextFrame();
            assertEquals(FrameType.HELLO, hello.type());
            for (int i = 0; i < sent.size(); i++) {
                TestFrames.Frame f = client.nextFrame();
                assertEquals(FrameType.MESSAGE, f.type());
                assertEquals(1 + i, f.streamId());
                assertEquals(i * 3, f.credit());
                assertEquals(i % 2 == 0 ? 0x01 : 0x02, f.flags());
                assertArrayEquals(sent.get(i), f.payload(), "frame " + i);
            }
            RecordingHandler server = loop.serverHandlers.next();
            assertEquals(0, server.framesOffIoThread.get(), "frames must be delivered on the I/O thread");
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void concurrentSendersNeverInterleave(String io) throws Exception {
        int threads = 8;
        int perThread = 1500;
        try (EchoLoop loop = new EchoLoop(io)) {
            RecordingHandler client = loop.connect();
            FrameConnection c = client.connection;
            c.send(TestFrames.hello());
            CountDownLatch start = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> senders = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int sender = t;
                Thread th = new Thread(() -> {
                    try {
                        start.await();
                        Random rnd = new Random(sender);
                        for (int seq = 0; seq < perThread; seq++) {
                            byte[] p = TestFrames.pattern(sender, seq, 9 + rnd.nextInt(3000));
                            SlabBuffer[] parts = TestFrames.split(1 + sender, p, 8);
                            boolean flush = seq % 3 == 0 || seq == perThread - 1;
                            c.send(parts[0], parts[1], flush);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "sender-" + t);
                senders.add(th);
                th.start();
            }
            start.countDown();
            for (Thread th : senders) {
                th.join(30_000);
            }
            assertNull(failure.get());
            assertEquals(FrameType.HELLO, client.nextFrame().type());
            int[] expected = new int[threads];
            for (int i = 0; i < threads * perThread; i++) {
                TestFrames.Frame f = client.nextFrame();
                int sender = TestFrames.sender(f.payload());
                int seq = TestFrames.seq(f.payload());
                assertEquals(1 + sender, f.streamId(), "frame header and payload of different sends");
                assertEquals(expected[sender], seq, "frames of sender " + sender + " out of order");
                assertArrayEquals(TestFrames.pattern(sender, seq, f.payload().length), f.payload());
                expected[sender]++;
            }
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void largeFramesKeptByTheHandlerStayIntactWhileMoreArrive(String io) throws Exception {
        int[] sizes = {FrameHeader.DEFAULT_MAX_PAYLOAD, FrameDecoder.LAND_AT_LEAST, 300_000, 100, 700_001};
        try (EchoLoop loop = new EchoLoop(io)) {
            RecordingHandler client = loop.connect();
            client.keepHolders = true;
            FrameConnection c = client.connection;
            c.send(TestFrames.hello());
            int rounds = 4;
            for (int i = 0; i < rounds * sizes.length; i++) {
                SlabBuffer[] parts = TestFrames.split(1, TestFrames.pattern(3, i, sizes[i % sizes.length]), 100);
                c.send(parts[0], parts[1], true);
            }
            assertEquals(FrameType.HELLO, client.nextFrame().type());
            for (int i = 0; i < rounds * sizes.length; i++) {
                assertArrayEquals(TestFrames.pattern(3, i, sizes[i % sizes.length]), client.nextFrame().payload(), "frame " + i);
            }
            // Reads are at most 64 KiB (Netty's adaptive sizing) unless they go into a landing frame's buffer, so a
            // frame of more than 86 KiB (64 KiB plus a quarter of it) had a quarter or more of it buffered before its
            // last read: it was received into a buffer of its own (the 64 KiB frame may have been, or not).
            int large = 3;
            assertTrue(client.holderFrames.get() >= rounds * large, "frames with a holder: " + client.holderFrames);
            assertEquals(client.holderFrames.get(), client.kept.size());
            // All arrived after the first was kept: a buffer reused or written into by a later read would show here.
            for (SlabBuffer b = client.kept.poll(); b != null; b = client.kept.poll()) {
                byte[] bytes = b.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                b.release();
                assertArrayEquals(TestFrames.pattern(3, TestFrames.seq(bytes), bytes.length), bytes, "a kept frame changed");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void oneMebibytePayloadsRoundTrip(String io) throws Exception {
        int size = FrameHeader.DEFAULT_MAX_PAYLOAD;
        try (EchoLoop loop = new EchoLoop(io)) {
            RecordingHandler client = loop.connect();
            FrameConnection c = client.connection;
            c.send(TestFrames.hello());
            int count = 12;
            for (int i = 0; i < count; i++) {
                SlabBuffer[] parts = TestFrames.split(1, TestFrames.pattern(7, i, size), 100);
                c.send(parts[0], parts[1], i % 2 == 1);
            }
            c.flush();
            assertEquals(FrameType.HELLO, client.nextFrame().type());
            for (int i = 0; i < count; i++) {
                TestFrames.Frame f = client.nextFrame();
                assertEquals(size, f.payload().length);
                assertArrayEquals(TestFrames.pattern(7, i, size), f.payload(), "frame " + i);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void largerPayloadsOnceBothSidesRaiseTheLimit(String io) throws Exception {
        int size = 5 << 20;
        try (EchoLoop loop = new EchoLoop(io, new RecordingHandler.Factory(true), 8 << 20)) {
            RecordingHandler client = loop.connect(8 << 20);
            FrameConnection c = client.connection;
            c.send(TestFrames.hello());
            byte[] p = TestFrames.pattern(3, 1, size);
            c.send(TestFrames.message(9, p));
            assertEquals(FrameType.HELLO, client.nextFrame().type());
            assertArrayEquals(p, client.nextFrame().payload());
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void framesTricklingInAFewBytesPerReadAreReassembled(String io) throws Exception {
        RecordingHandler.Factory recording = new RecordingHandler.Factory(false);
        try (EchoLoop loop = new EchoLoop(io, recording, 0);
             RawClient raw = new RawClient(loop.address)) {
            ByteArrayOutputStream wire = new ByteArrayOutputStream();
            wire.write(TestFrames.helloWire());
            List<byte[]> payloads = List.of(TestFrames.pattern(1, 0, 0), TestFrames.pattern(1, 1, 40_000),
                    TestFrames.pattern(1, 2, 17), TestFrames.pattern(1, 3, 70_000));
            for (int i = 0; i < payloads.size(); i++) {
                wire.write(TestFrames.wire(FrameType.MESSAGE, 0, 1, i, payloads.get(i)));
            }
            byte[] all = wire.toByteArray();
            Random rnd = new Random(42);
            int pos = 0;
            while (pos < all.length) {
                // tiny pieces at first (headers split at every offset), bigger ones later to keep it quick
                int n = Math.min(all.length - pos, pos < 2_000 ? 1 + rnd.nextInt(7) : 1 + rnd.nextInt(3_000));
                raw.write(Arrays.copyOfRange(all, pos, pos + n));
                pos += n;
            }
            RecordingHandler server = recording.next();
            assertEquals(FrameType.HELLO, server.nextFrame().type());
            for (int i = 0; i < payloads.size(); i++) {
                TestFrames.Frame f = server.nextFrame();
                assertEquals(i, f.credit());
                assertArrayEquals(payloads.get(i), f.payload());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void unflushedSendsWaitForAFlush(String io) throws Exception {
        try (EchoLoop loop = new EchoLoop(io)) {
            RecordingHandler client = loop.connect();
            FrameConnection c = client.connection;
            c.send(TestFrames.hello(), null, false);
            c.send(TestFrames.message(1, new byte[] {1}), null, false);
            // Best effort: an unflushed send leaves no trace to wait for, so this looks for a short while; on a slow
            // machine it may look too briefly to catch a bug, but it cannot fail a correct transport.
            assertNull(client.frames.poll(200, TimeUnit.MILLISECONDS), "an unflushed send went out on its own");
            c.flush();
            assertEquals(FrameType.HELLO, client.nextFrame().type());
            assertEquals(FrameType.MESSAGE, client.nextFrame().type());
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void sendsBeforeCloseGoOutAndSendsAfterAreReleased(String io) throws Exception {
        RecordingHandler.Factory recording = new RecordingHandler.Factory(false);
        try (EchoLoop loop = new EchoLoop(io, recording, 0)) {
            RecordingHandler client = loop.connect();
            FrameConnection c = client.connection;
            c.send(TestFrames.hello(), null, false);
            for (int i = 0; i < 50; i++) {
                c.send(TestFrames.message(1, TestFrames.pattern(0, i, 100)), null, false);
            }
            c.close("done here");
            assertFalse(c.isOpen());
            for (int i = 0; i < 10; i++) {
                SlabBuffer[] parts = TestFrames.split(1, TestFrames.pattern(0, i, 50), 10);
                c.send(parts[0], parts[1], true);
            }
            client.awaitClosed();
            assertEquals("done here", client.closedReason);
            assertNull(client.closedCause);
            // sends after onClosed are released at once too
            c.send(TestFrames.message(1, new byte[] {1}));

            RecordingHandler server = recording.next();
            assertEquals(FrameType.HELLO, server.nextFrame().type());
            for (int i = 0; i < 50; i++) {
                assertEquals(i, TestFrames.seq(server.nextFrame().payload()));
            }
            server.awaitClosed();
            assertEquals(TcpFrameConnection.PEER_CLOSED, server.closedReason);
            assertNull(server.closedCause);
            // each side's onClosed comes once, from its channel going inactive: nothing later to wait for
            assertEquals(1, client.closedCalls.get());
            assertEquals(1, server.closedCalls.get());
            assertTrue(server.frames.isEmpty());
        }
    }
}
