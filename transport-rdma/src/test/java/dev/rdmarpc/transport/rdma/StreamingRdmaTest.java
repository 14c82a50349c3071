package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static dev.rdmarpc.transport.rdma.RdmaTests.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.StreamObserver;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Server, client and bidi streaming over RDMA, with messages on all three paths. */
@Tag("rdma")
class StreamingRdmaTest extends RdmaEndToEndBase {

    private static CallOptions deadline(long ms) {
        return CallOptions.DEFAULT.withDeadlineAfter(timeout(ms), TimeUnit.MILLISECONDS);
    }

    @Test
    void serverStreaming() throws Exception {
        startServer();
        RpcChannel ch = channel();
        int[] sizes = {64, 4096, 300 * 1024};
        for (int size : sizes) {
            RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
            Iterator<byte[]> it = ClientCalls.blockingServerStreamingCall(ch, EchoService.STREAM, deadline(60_000),
                    Bytes.ofInts(20, size, size));
            int n = 0;
            while (it.hasNext()) {
                byte[] m = it.next();
                assertEquals(-1, Bytes.mismatch(Bytes.pattern(size, size + n), m), "message " + n + " of " + size + " B");
                n++;
            }
            assertEquals(20, n);
            RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
            log("server streaming 20 x " + size + " B: " + d);
            if (size > 8192) {
                assertTrue(d.rendezvousReads() >= 20, "large messages by rendezvous: " + d);
            }
        }
        assertRdma(ch);
    }

    @Test
    void clientStreaming() throws Exception {
        startServer();
        RpcChannel ch = channel();
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        StreamObserver<byte[]> requests = ClientCalls.asyncClientStreamingCall(
                ch.newCall(EchoService.COUNT, deadline(60_000)), observer(result));
        int xor = 0;
        long bytes = 0;
        int count = 0;
        for (int size : new int[]{1, 64, 4096, 20_000, 200_000, 64, 1 << 20, 7}) {
            for (int k = 0; k < 3; k++) {
                byte[] m = Bytes.pattern(size, count);
                for (byte b : m) {
                    xor ^= b;
                }
                bytes += size;
                count++;
                requests.onNext(m);
            }
        }
        requests.onCompleted();
        byte[] r = result.get(timeout(60_000), TimeUnit.MILLISECONDS);
        assertEquals(count, Bytes.intAt(r, 0));
        assertEquals((int) bytes, Bytes.intAt(r, 1));
        assertEquals(xor, Bytes.intAt(r, 2));
        assertRdma(ch);
    }

    @Test
    void bidiStreaming() throws Exception {
        startServer();
        RpcChannel ch = channel();
        List<byte[]> replies = new ArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        StreamObserver<byte[]> requests = ClientCalls.asyncBidiStreamingCall(ch.newCall(EchoService.CHAT, deadline(60_000)),
                new StreamObserver<>() {
                    @Override
                    public void onNext(byte[] value) {
                        synchronized (replies) {
                            replies.add(value);
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(null);
                    }
                });
        List<byte[]> sent = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            int size = i % 3 == 0 ? 32 : i % 3 == 1 ? 5000 : 100_000;
            byte[] m = Bytes.pattern(size, i);
            sent.add(m);
            requests.onNext(m);
        }
        requests.onCompleted();
        assertNull(done.get(timeout(60_000), TimeUnit.MILLISECONDS));
        assertEquals(sent.size(), replies.size());
        for (int i = 0; i < sent.size(); i++) {
            byte[] expect = sent.get(i).clone();
            for (int k = 0; k < expect.length; k++) {
                expect[k] = (byte) ~expect[k];
            }
            assertEquals(-1, Bytes.mismatch(expect, replies.get(i)), "reply " + i);
        }
        assertRdma(ch);
    }

    static StreamObserver<byte[]> observer(CompletableFuture<byte[]> result) {
        return new StreamObserver<>() {
            byte[] last;

            @Override
            public void onNext(byte[] value) {
                last = value;
            }

            @Override
            public void onError(Throwable t) {
                result.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                result.complete(last);
            }
        };
    }
}
