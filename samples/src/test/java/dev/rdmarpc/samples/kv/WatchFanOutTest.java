package dev.rdmarpc.samples.kv;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Watch fans out without head-of-line blocking: a subscriber that stops reading does not hold up writers (their Puts,
 * and another client's, are answered), and once it falls more than its bound behind it is dropped with
 * RESOURCE_EXHAUSTED "watcher too slow".
 */
class WatchFanOutTest {
    /** Events a subscriber may fall behind here (the sample's default is larger). */
    private static final int BOUND = 8;
    /** Puts of {@link #VALUE} bytes: far more than the laggard's window, the server's send queue and the bound hold. */
    private static final int PUTS = 200;
    private static final int VALUE = 16 * 1024;

    private final List<RpcChannel> channels = new ArrayList<>();
    private final ExecutorService laggardCallbacks = Executors.newSingleThreadExecutor();
    private RpcServer server;
    private long baseline;

    @AfterEach
    void stop() throws Exception {
        for (RpcChannel c : channels) {
            c.shutdownNow();
        }
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
        laggardCallbacks.shutdownNow();
        Await.until(() -> SlabPool.shared().inUseBuffers() == baseline, () -> "slab buffers in use back to " + baseline
                + ", not " + SlabPool.shared().inUseBuffers() + ":\n" + SlabPool.shared().describeLiveBuffers());
    }

    private RpcChannel channel(java.util.function.UnaryOperator<RpcChannel.Builder> config) {
        RpcChannel c = config.apply(RpcChannel.forAddress("127.0.0.1", server.getPort())).build();
        channels.add(c);
        return c;
    }

    private static ByteString k(String s) {
        return ByteString.copyFromUtf8(s);
    }

    @Test
    void aSubscriberThatStopsReadingHoldsUpNoWriterAndIsDroppedWithAStatus() throws Exception {
        baseline = SlabPool.shared().inUseBuffers();
        server = RpcServer.forPort(0).addService(new KeyValueService(new KeyValueStore(), BOUND)).build().start();
        // the laggard: a small window, and a callback thread that blocks in its first event until the test lets go
        RpcChannel slow = channel(b -> b.flowControlWindow(64 * 1024).executor(laggardCallbacks));
        CountDownLatch firstEvent = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        AtomicInteger received = new AtomicInteger();
        CompletableFuture<Status> laggardEnd = new CompletableFuture<>();
        StreamObserver<WatchRequest> watch = KeyValueRpc.newStub(slow).watch(new StreamObserver<>() {
            @Override
            public void onNext(WatchEvent e) {
                received.incrementAndGet();
                firstEvent.countDown();
                try {
                    letGo.await(); // reads nothing more until then: its window fills, then the server's queue
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public void onError(Throwable t) {
                laggardEnd.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                laggardEnd.complete(Status.OK);
            }
        });
        watch.onNext(WatchRequest.newBuilder().setPrefix(k("w/")).build());

        KeyValueRpc.KeyValueBlockingStub writer = KeyValueRpc.newBlockingStub(channel(b -> b)).withDeadlineAfter(60, TimeUnit.SECONDS);
        ByteString value = ByteString.copyFrom(new byte[VALUE]);
        // the watch is registered once its first event arrives (and the laggard blocks in it)
        Await.until(() -> {
            writer.put(PutRequest.newBuilder().setKey(k("w/probe")).setValue(value).build());
            return firstEvent.getCount() == 0;
        }, "the watch seeing a put under its prefix");
        for (int i = 0; i < PUTS; i++) {
            assertEquals(1, writer.put(PutRequest.newBuilder().setKey(k("w/" + i)).setValue(value).build()).getVersion(),
                    "Put " + i + " answered while the subscriber reads nothing");
        }
        KeyValueRpc.KeyValueBlockingStub other = KeyValueRpc.newBlockingStub(channel(b -> b)).withDeadlineAfter(60, TimeUnit.SECONDS);
        assertEquals(1, other.put(PutRequest.newBuilder().setKey(k("w/other")).setValue(k("v")).build()).getVersion(),
                "another client's Put is answered too");
        assertEquals(k("v"), other.get(GetRequest.newBuilder().setKey(k("w/other")).build()).getValue());

        letGo.countDown();
        Status end = laggardEnd.get(60, TimeUnit.SECONDS);
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, end.getCode(), end.toString());
        assertTrue(end.getDescription().startsWith("watcher too slow"), end.getDescription());
        assertTrue(received.get() < PUTS, "the events it fell behind by were dropped, not sent: " + received.get());
    }
}
