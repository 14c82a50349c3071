package dev.rdmarpc.it;

import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a client that stops reading can make the server hold: server streams that cannot send wait for room without an
 * OS thread each, and what they queue stays bounded per stream, however large a window the client advertised.
 */
class BackpressureTest extends LoopbackTest {
    private static final int STREAMS = 40;
    /** A message that, framed, fits a 16 KiB pool block (the bound below counts blocks, not payload). */
    private static final int CHUNK = 16_000;
    /** Per stream: the send queue's limit (OutboundFlow.BLOCK_LIMIT, 1 MiB) plus one message past it. */
    private static final long PER_STREAM_BOUND = (1 << 20) + 2 * CHUNK;
    /** For the connection: what the transport buffers (below its hard bound) and the requests. */
    private static final long CONNECTION_BOUND = 16 << 20;

    private final SlabPool serverPool = new SlabPool(0, false);

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        return b.slabPool(serverPool);
    }

    @Test
    void stalledServerStreamsHoldBoundedMemoryAndNoThreadEach() throws IOException {
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        try (Socket s = new Socket()) {
            s.setReceiveBufferSize(16 * 1024);
            s.connect(new InetSocketAddress("127.0.0.1", server.getPort()));
            OutputStream out = s.getOutputStream();
            // the largest window there is: only the unread socket can stop the server
            out.write(frames(new Hello(Hello.VERSION, Integer.MAX_VALUE, 1 << 20, 4 << 20, Map.of())));
            for (int i = 0; i < STREAMS; i++) {
                out.write(firehoseRequest(1 + 2 * i));
            }
            out.flush();
            Await.until(() -> service.firehoseThreads.size() == STREAMS
                            && service.firehoseThreads.stream().allMatch(BackpressureTest::waitsForRoom),
                    () -> service.firehoseThreads.size() + " FIREHOSE handlers started, waiting for room: "
                            + service.firehoseThreads.stream().filter(BackpressureTest::waitsForRoom).count());
            long held = serverPool.inUseBytes();
            long bound = STREAMS * PER_STREAM_BOUND + CONNECTION_BOUND;
            assertTrue(held <= bound, "server holds " + held + " bytes for a client that reads nothing; bound " + bound);
            long sentBytes = service.firehoseSent.get() * CHUNK;
            assertTrue(sentBytes <= bound + (64L << 20), "handlers produced " + sentBytes + " bytes");
            int threadsNow = ManagementFactory.getThreadMXBean().getThreadCount();
            assertTrue(threadsNow - threadsBefore < STREAMS / 2, STREAMS + " stalled streams took "
                    + (threadsNow - threadsBefore) + " more OS threads (" + threadsBefore + " -> " + threadsNow + ")");
            // the connection's lane worker may be stuck in the first handler; every other one waits on a virtual thread
            assertTrue(service.firehoseThreads.stream().filter(t -> !t.isVirtual()).count() <= 1,
                    "stalled handlers beyond the first run on virtual threads: " + service.firehoseThreads);
        }
        // the client went away: every handler sees its call cancelled and ends
        Await.until(() -> service.events.stream().filter("firehose-stopped"::equals).count() == STREAMS,
                () -> "FIREHOSE handlers stopped: " + service.events);
        Await.until(() -> serverPool.inUseBuffers() == 0, () -> "server slabs back: " + serverPool.describeLiveBuffers());
    }

    @Test
    void aReaderThatComesBackGetsEveryMessageInOrder() throws Exception {
        // the same stall through the real client: it stops reading (no request), then reads again
        var call = channel.newCall(TestService.FIREHOSE, dev.rdmarpc.core.CallOptions.DEFAULT
                .withDeadlineAfter(60, java.util.concurrent.TimeUnit.SECONDS));
        java.util.concurrent.BlockingQueue<byte[]> got = new java.util.concurrent.LinkedBlockingQueue<>();
        java.util.concurrent.CompletableFuture<dev.rdmarpc.core.Status> closed = new java.util.concurrent.CompletableFuture<>();
        call.start(new dev.rdmarpc.core.ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
                got.add(message);
            }

            @Override
            public void onClose(dev.rdmarpc.core.Status status, dev.rdmarpc.core.Metadata trailers) {
                closed.complete(status);
            }
        }, new dev.rdmarpc.core.Metadata());
        call.sendMessage(Bytes.ofInt(CHUNK));
        call.halfClose();
        call.request(1);
        Await.until(() -> waitsForRoom(service.firehoseThread), () -> "the FIREHOSE handler waiting for room");
        long sent = service.firehoseSent.get();
        call.request((int) sent + 10);
        Await.until(() -> got.size() >= sent + 10, () -> got.size() + " of " + (sent + 10) + " messages");
        assertTrue(service.firehoseSent.get() > sent, "reading lets the server go on");
        call.cancel("done", null);
        assertEquals(dev.rdmarpc.core.Status.Code.CANCELLED, closed.get(60, java.util.concurrent.TimeUnit.SECONDS).getCode());
    }

    private static boolean waitsForRoom(Thread t) {
        return t != null && (t.getState() == Thread.State.TIMED_WAITING || t.getState() == Thread.State.WAITING)
                && Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getMethodName().startsWith("awaitRoom"));
    }

    private byte[] frames(Hello hello) {
        return bytes(Frames.hello(serverPool, hello));
    }

    /** HEADERS (ending the client's side) for FIREHOSE, then its one request message: the chunk size. */
    private byte[] firehoseRequest(int streamId) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] headers = bytes(Frames.requestHeaders(serverPool, streamId, false,
                TestService.FIREHOSE.getFullMethodName(), "localhost", 0, null));
        b.writeBytes(headers);
        ByteBuffer m = ByteBuffer.allocate(FrameHeader.SIZE + 8).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(8).put((byte) FrameType.MESSAGE)
                .put((byte) (FrameFlags.BEGIN | FrameFlags.END | FrameFlags.END_STREAM)).putShort((short) 0)
                .putInt(streamId).putInt(0);
        m.putInt(4).put(Bytes.ofInt(CHUNK));
        b.writeBytes(m.array());
        return b.toByteArray();
    }

    private static byte[] bytes(SlabBuffer frame) {
        try {
            return frame.segment().asSlice(0, frame.length()).toArray(ValueLayout.JAVA_BYTE);
        } finally {
            frame.release();
        }
    }
}
