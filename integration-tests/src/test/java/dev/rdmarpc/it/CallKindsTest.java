package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.StreamObserver;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** All four call kinds in the three call styles, over TCP on loopback. */
class CallKindsTest extends LoopbackTest {

    static final class Collector<T> implements StreamObserver<T> {
        final List<T> values = new ArrayList<>();
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicReference<Throwable> error = new AtomicReference<>();

        @Override
        public synchronized void onNext(T value) {
            values.add(value);
        }

        @Override
        public void onError(Throwable t) {
            error.set(t);
            done.countDown();
        }

        @Override
        public void onCompleted() {
            done.countDown();
        }

        void await() throws InterruptedException {
            assertTrue(done.await(60, TimeUnit.SECONDS), "call did not finish");
        }

        /** Waits for the call to end; its status (OK when it completed). */
        dev.rdmarpc.core.Status status() throws InterruptedException {
            await();
            Throwable t = error.get();
            return t == null ? dev.rdmarpc.core.Status.OK : dev.rdmarpc.core.Status.fromThrowable(t);
        }
    }

    @Test
    void unaryBlockingAsyncAndFuture() throws Exception {
        byte[] req = Bytes.pattern(100, 1);
        assertArrayEquals(req, ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, req));

        Collector<byte[]> c = new Collector<>();
        ClientCalls.asyncUnaryCall(channel.newCall(TestService.ECHO, CallOptions.DEFAULT), req, c);
        c.await();
        assertNull(c.error.get());
        assertEquals(1, c.values.size());
        assertArrayEquals(req, c.values.get(0));

        CompletableFuture<byte[]> f = ClientCalls.futureUnaryCall(channel.newCall(TestService.ECHO, CallOptions.DEFAULT), req);
        assertArrayEquals(req, f.get(60, TimeUnit.SECONDS));
        assertEquals("tcp", channel.currentTransport());
    }

    @Test
    void unaryEmptyAndLargeMessages() {
        byte[] empty = new byte[0];
        assertArrayEquals(empty, ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, empty));
        byte[] big = Bytes.pattern(3 << 20, 9);
        assertArrayEquals(big, ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, big));
    }

    @Test
    void serverStreamingBlockingIteratorAndAsync() throws Exception {
        byte[] req = new byte[8];
        System.arraycopy(Bytes.ofInt(50), 0, req, 0, 4);
        System.arraycopy(Bytes.ofInt(1000), 0, req, 4, 4);
        Iterator<byte[]> it = ClientCalls.blockingServerStreamingCall(channel, TestService.STREAM, CallOptions.DEFAULT, req);
        int n = 0;
        while (it.hasNext()) {
            assertArrayEquals(Bytes.pattern(1000, n), it.next());
            n++;
        }
        assertEquals(50, n);

        Collector<byte[]> c = new Collector<>();
        ClientCalls.asyncServerStreamingCall(channel.newCall(TestService.STREAM, CallOptions.DEFAULT), req, c);
        c.await();
        assertNull(c.error.get());
        assertEquals(50, c.values.size());
    }

    @Test
    void clientStreaming() throws Exception {
        Collector<byte[]> c = new Collector<>();
        StreamObserver<byte[]> requests = ClientCalls.asyncClientStreamingCall(channel.newCall(TestService.COUNT, CallOptions.DEFAULT), c);
        long total = 0;
        for (int i = 0; i < 100; i++) {
            byte[] m = Bytes.pattern(i * 100, i);
            total += m.length;
            requests.onNext(m);
        }
        requests.onCompleted();
        c.await();
        assertNull(c.error.get());
        assertEquals(total, Bytes.toInt(c.values.get(0)));
    }

    @Test
    void bidiStreaming() throws Exception {
        Collector<byte[]> c = new Collector<>();
        StreamObserver<byte[]> requests = ClientCalls.asyncBidiStreamingCall(channel.newCall(TestService.CHAT, CallOptions.DEFAULT), c);
        for (int i = 0; i < 200; i++) {
            requests.onNext(Bytes.pattern(64, i));
        }
        requests.onCompleted();
        c.await();
        assertNull(c.error.get());
        assertEquals(200, c.values.size());
        for (int i = 0; i < 200; i++) {
            byte[] expected = Bytes.pattern(64, i);
            for (int j = 0; j < expected.length; j++) {
                expected[j] = (byte) ~expected[j];
            }
            assertArrayEquals(expected, c.values.get(i));
        }
    }

    @Test
    void manyConcurrentCallsShareOneConnection() throws Exception {
        List<CompletableFuture<byte[]>> futures = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            futures.add(ClientCalls.futureUnaryCall(channel.newCall(TestService.ECHO, CallOptions.DEFAULT), Bytes.pattern(i, i)));
        }
        for (int i = 0; i < 500; i++) {
            assertArrayEquals(Bytes.pattern(i, i), futures.get(i).get(60, TimeUnit.SECONDS));
        }
        assertEquals(1, server.connectionCount());
    }
}
