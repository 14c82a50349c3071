package dev.rdmarpc.samples.kv;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The key-value service over a real server and channel on loopback. */
class KeyValueServiceTest {
    private RpcServer server;
    private RpcChannel channel;
    private KeyValueRpc.KeyValueBlockingStub kv;
    private KeyValueRpc.KeyValueStub async;
    private long baseline;

    @BeforeEach
    void start() throws Exception {
        baseline = SlabPool.shared().inUseBuffers();
        server = RpcServer.forPort(0).addService(new KeyValueService(new KeyValueStore())).maxInboundMessageSize(64 << 20).build().start();
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).maxInboundMessageSize(64 << 20).build();
        kv = KeyValueRpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        async = KeyValueRpc.newStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow();
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
        Await.until(() -> SlabPool.shared().inUseBuffers() == baseline, () -> "slab buffers in use back to " + baseline
                + ", not " + SlabPool.shared().inUseBuffers() + ":\n" + SlabPool.shared().describeLiveBuffers());
    }

    private static ByteString k(String s) {
        return ByteString.copyFromUtf8(s);
    }

    private static ByteString random(int size) {
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        return ByteString.copyFrom(b);
    }

    @Test
    void putGetDeleteFromZeroBytesTo16MiB() {
        for (int size : new int[]{0, 1, 4096, 1 << 20, 16 << 20}) {
            ByteString v = random(size);
            assertEquals(1, kv.put(PutRequest.newBuilder().setKey(k("v" + size)).setValue(v).build()).getVersion());
            GetResponse r = kv.get(GetRequest.newBuilder().setKey(k("v" + size)).build());
            assertEquals(v, r.getValue());
        }
        assertEquals(2, kv.put(PutRequest.newBuilder().setKey(k("v0")).setValue(k("x")).build()).getVersion());
        assertTrue(kv.delete(DeleteRequest.newBuilder().setKey(k("v0")).build()).getExisted());
        assertFalse(kv.delete(DeleteRequest.newBuilder().setKey(k("v0")).build()).getExisted());
        StatusException e = assertThrows(StatusException.class, () -> kv.get(GetRequest.newBuilder().setKey(k("v0")).build()));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
    }

    @Test
    void valuesOver16MiBAndEmptyKeysAreRejected() {
        StatusException e = assertThrows(StatusException.class, () ->
                kv.put(PutRequest.newBuilder().setKey(k("big")).setValue(random((16 << 20) + 1)).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        e = assertThrows(StatusException.class, () -> kv.get(GetRequest.newBuilder().build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    }

    @Test
    void scanReturnsTheRangeInOrder() {
        for (int i = 0; i < 50; i++) {
            kv.put(PutRequest.newBuilder().setKey(k(String.format("key%03d", i))).setValue(k("v" + i)).build());
        }
        Iterator<KeyValuePair> it = kv.scan(ScanRequest.newBuilder().setStart(k("key010")).setEnd(k("key020")).build());
        List<String> keys = new ArrayList<>();
        it.forEachRemaining(p -> keys.add(p.getKey().toStringUtf8()));
        assertEquals(10, keys.size());
        assertEquals("key010", keys.get(0));
        assertEquals("key019", keys.get(9));
        Iterator<KeyValuePair> limited = kv.scan(ScanRequest.newBuilder().setLimit(3).build());
        int n = 0;
        while (limited.hasNext()) {
            limited.next();
            n++;
        }
        assertEquals(3, n);
    }

    @Test
    void batchPutAndWatch() throws Exception {
        List<WatchEvent> events = new ArrayList<>();
        CompletableFuture<Void> watchDone = new CompletableFuture<>();
        StreamObserver<WatchRequest> watch = async.watch(new StreamObserver<>() {
            @Override
            public void onNext(WatchEvent e) {
                synchronized (events) {
                    events.add(e);
                }
            }

            @Override
            public void onError(Throwable t) {
                watchDone.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                watchDone.complete(null);
            }
        });
        watch.onNext(WatchRequest.newBuilder().setPrefix(k("w/")).build());
        // the watch is registered once a put under the prefix is seen
        Await.until(() -> {
            kv.put(PutRequest.newBuilder().setKey(k("w/probe")).setValue(k("p")).build());
            return hasKey(events, "w/probe");
        }, "the watch seeing a put under its prefix");
        CompletableFuture<Long> count = new CompletableFuture<>();
        StreamObserver<PutRequest> batch = async.batchPut(new StreamObserver<>() {
            @Override
            public void onNext(BatchPutResponse r) {
                count.complete(r.getCount());
            }

            @Override
            public void onError(Throwable t) {
                count.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        for (int i = 0; i < 5; i++) {
            batch.onNext(PutRequest.newBuilder().setKey(k("w/" + i)).setValue(k("v")).build());
        }
        batch.onNext(PutRequest.newBuilder().setKey(k("other/x")).setValue(k("v")).build());
        batch.onCompleted();
        assertEquals(6, count.get(60, TimeUnit.SECONDS));
        // events come in the order of the puts: once w/4's is here, w/0..w/3's are too
        Await.until(() -> hasKey(events, "w/4"), "the watch seeing the batch's last put under its prefix");
        kv.delete(DeleteRequest.newBuilder().setKey(k("w/0")).build());
        watch.onCompleted();
        // the watch ends after every event it sent, so an event for other/x, had there been one, is here by now
        watchDone.get(60, TimeUnit.SECONDS);
        synchronized (events) {
            assertTrue(events.stream().noneMatch(e -> e.getKey().toStringUtf8().startsWith("other/")), "only watched prefixes");
            for (int i = 0; i < 5; i++) {
                assertTrue(hasKey(events, "w/" + i), "an event for w/" + i);
            }
        }
    }

    private static boolean hasKey(List<WatchEvent> events, String key) {
        synchronized (events) {
            return events.stream().anyMatch(e -> e.getKey().equals(k(key)));
        }
    }

    @Test
    void metricsEndpointServesPrometheusText() throws Exception {
        try (MetricsEndpoint endpoint = new MetricsEndpoint(0);
             RpcServer metered = RpcServer.forPort(0).addService(new KeyValueService(new KeyValueStore()))
                     .meterRegistry(endpoint.registry()).build().start();
             RpcChannel ch = RpcChannel.forAddress("127.0.0.1", metered.getPort()).build()) {
            KeyValueRpc.newBlockingStub(ch).put(PutRequest.newBuilder().setKey(k("m")).setValue(k("v")).build());
            var http = java.net.http.HttpClient.newHttpClient();
            java.util.concurrent.atomic.AtomicReference<String> scraped = new java.util.concurrent.atomic.AtomicReference<>("");
            // the server records a call just after its answer went out, so the client may be told first
            Await.until(() -> {
                try {
                    scraped.set(http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + endpoint.port()
                            + "/metrics")).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body());
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
                return scraped.get().contains("status=\"OK\"");
            }, () -> "the Put call in the scraped metrics:\n" + scraped.get());
            String body = scraped.get();
            assertTrue(body.contains("rdmarpc_server_calls_seconds_count{method=\"rdmarpc.samples.kv.KeyValue/Put\",status=\"OK\",transport=\"tcp\"} 1"), body);
            assertTrue(body.contains("rdmarpc_server_bytes_received_bytes_total"), body);
            assertTrue(body.contains("rdmarpc_slab_bytes_in_use_bytes"), body);
        }
    }

    @Test
    void clientMainRunsItsWorkloadAgainstTheServer() {
        int rc = new picocli.CommandLine(new KvClient()).execute("--target", "127.0.0.1:" + server.getPort(), "--requests", "300");
        assertEquals(0, rc);
    }
}
