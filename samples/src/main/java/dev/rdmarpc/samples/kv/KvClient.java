package dev.rdmarpc.samples.kv;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.TransportMode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.Iterator;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Command-line client that runs a short workload against a key-value server and reports what it did. */
@Command(name = "kv-client", mixinStandardHelpOptions = true, version = "rdmarpc KV sample 0.1",
        description = "Runs a short workload against an rdmarpc key-value server: puts and gets of 0 B to 16 MiB values, "
                + "a range scan, a batch put, a watch, deletes; checks every answer and prints timings.")
public final class KvClient implements Callable<Integer> {
    @Option(names = {"-t", "--target"}, defaultValue = "127.0.0.1:50051", description = "Server host:port (default: ${DEFAULT-VALUE}).")
    String target;

    @Option(names = "--transport", defaultValue = "AUTO", description = "AUTO, RDMA or TCP (default: ${DEFAULT-VALUE}).")
    TransportMode transport;

    @Option(names = {"-n", "--requests"}, defaultValue = "2000", description = "Small puts and gets to time (default: ${DEFAULT-VALUE}).")
    int requests;

    @Option(names = "--deadline-ms", defaultValue = "30000", description = "Deadline of each call, ms (default: ${DEFAULT-VALUE}).")
    long deadlineMs;

    @Option(names = "--connect-timeout-ms", defaultValue = "20000",
            description = "Time for TCP connect and the HELLO exchange (RDMA upgrade included), ms (default: ${DEFAULT-VALUE}; "
                    + "raise it in an emulated RDMA guest, where opening the device takes tens of seconds).")
    long connectTimeoutMs;

    private static ByteString key(String s) {
        return ByteString.copyFromUtf8(s);
    }

    private static ByteString value(int size, int seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return ByteString.copyFrom(b);
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("check failed: " + what);
        }
    }

    @Override
    public Integer call() throws Exception {
        try (RpcChannel channel = RpcChannel.forTarget(target).transportMode(transport)
                .connectTimeout(java.time.Duration.ofMillis(connectTimeoutMs))
                .maxInboundMessageSize(64 << 20).build()) {
            KeyValueRpc.KeyValueBlockingStub kv = KeyValueRpc.newBlockingStub(channel).withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS);
            KeyValueRpc.KeyValueStub async = KeyValueRpc.newStub(channel).withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS);

            // 1. values from 0 bytes to 16 MiB: put, get, compare
            for (int size : new int[]{0, 64, 4096, 65536, 1 << 20, 16 << 20}) {
                ByteString v = value(size, size);
                long t0 = System.nanoTime();
                long version = kv.put(PutRequest.newBuilder().setKey(key("blob/" + size)).setValue(v).build()).getVersion();
                GetResponse got = kv.get(GetRequest.newBuilder().setKey(key("blob/" + size)).build());
                long us = (System.nanoTime() - t0) / 1000;
                check(got.getValue().equals(v), "value of " + size + " bytes read back intact");
                System.out.printf(Locale.ROOT, "put+get %9d B  version %d  %8d us  ok%n", size, version, us);
            }
            System.out.println("connected over " + channel.currentTransport());

            // 2. timed small round trips
            long[] lat = new long[requests];
            ByteString small = value(64, 1);
            for (int i = 0; i < requests; i++) {
                long t0 = System.nanoTime();
                kv.put(PutRequest.newBuilder().setKey(key(String.format(Locale.ROOT, "k/%06d", i))).setValue(small).build());
                lat[i] = System.nanoTime() - t0;
            }
            java.util.Arrays.sort(lat);
            System.out.printf(Locale.ROOT, "%d puts of 64 B: p50 %.1f us, p99 %.1f us%n", requests, lat[requests / 2] / 1e3, lat[requests * 99 / 100] / 1e3);

            // 3. scan a range (server streaming)
            Iterator<KeyValuePair> it = kv.scan(ScanRequest.newBuilder().setStart(key("k/000100")).setEnd(key("k/000200")).build());
            int scanned = 0;
            while (it.hasNext()) {
                KeyValuePair p = it.next();
                check(p.getKey().toStringUtf8().compareTo("k/000100") >= 0 && p.getKey().toStringUtf8().compareTo("k/000200") < 0, "scan stays in range");
                scanned++;
            }
            check(scanned == Math.max(0, Math.min(requests, 200) - 100), "scan returned every key in range");
            System.out.println("scan [k/000100, k/000200): " + scanned + " pairs");

            // 4. watch (bidi) while a batch put (client streaming) runs
            java.util.Set<String> batchKeysSeen = java.util.concurrent.ConcurrentHashMap.newKeySet();
            CountDownLatch registered = new CountDownLatch(1);
            CountDownLatch watched = new CountDownLatch(10);
            CompletableFuture<Void> watchDone = new CompletableFuture<>();
            StreamObserver<WatchRequest> watch = async.watch(new StreamObserver<>() {
                @Override
                public void onNext(WatchEvent e) {
                    registered.countDown();
                    String k = e.getKey().toStringUtf8();
                    if (!k.equals("batch/probe") && batchKeysSeen.add(k)) {
                        watched.countDown();
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
            watch.onNext(WatchRequest.newBuilder().setPrefix(key("batch/")).build());
            // the watch is in place once a put under its prefix comes back as an event
            for (int i = 0; i < 500 && registered.getCount() > 0; i++) {
                kv.put(PutRequest.newBuilder().setKey(key("batch/probe")).setValue(value(1, i)).build());
                registered.await(10, TimeUnit.MILLISECONDS);
            }
            check(registered.getCount() == 0, "watch registered its prefix");
            CompletableFuture<Long> batchCount = new CompletableFuture<>();
            StreamObserver<PutRequest> batch = async.batchPut(new StreamObserver<>() {
                @Override
                public void onNext(BatchPutResponse r) {
                    batchCount.complete(r.getCount());
                }

                @Override
                public void onError(Throwable t) {
                    batchCount.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {
                }
            });
            for (int i = 0; i < 10; i++) {
                batch.onNext(PutRequest.newBuilder().setKey(key("batch/" + i)).setValue(value(100, i)).build());
            }
            batch.onCompleted();
            check(batchCount.get(30, TimeUnit.SECONDS) == 10, "batch put stored 10 pairs");
            check(watched.await(30, TimeUnit.SECONDS), "watch saw the 10 batch puts");
            watch.onCompleted();
            watchDone.get(30, TimeUnit.SECONDS);
            System.out.println("batch put: 10 pairs; watch saw all " + batchKeysSeen.size() + " of them");

            // 5. deletes and a miss
            check(kv.delete(DeleteRequest.newBuilder().setKey(key("blob/64")).build()).getExisted(), "delete existing key");
            check(!kv.delete(DeleteRequest.newBuilder().setKey(key("blob/64")).build()).getExisted(), "second delete finds nothing");
            try {
                kv.get(GetRequest.newBuilder().setKey(key("blob/64")).build());
                check(false, "get of a deleted key fails");
            } catch (StatusException e) {
                check(e.getStatus().getCode() == Status.Code.NOT_FOUND, "deleted key is NOT_FOUND");
            }
            System.out.println("delete: ok; get of the deleted key: NOT_FOUND as expected");
            if ("rdma".equals(channel.currentTransport())) {
                System.out.println("kv-client RDMA counters: " + dev.rdmarpc.transport.rdma.RdmaMetrics.snapshot());
            }
            System.out.println("kv-client: all checks passed");
            return 0;
        } catch (StatusException e) {
            System.err.println("kv-client: call failed: " + e.getStatus());
            return 2;
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new KvClient()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
    }
}
