package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.TransportMode;

import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;

/**
 * Our side of the perftest comparison (run by {@code scripts/rdma-vm-test.sh --perf} after perftest, in the same
 * guest boot; also runs on an RNIC host). A server and a channel in this JVM over RDMA, in event mode unless
 * {@code -Drdmarpc.rdma.spinMicros} says otherwise. Prints one line per figure, warm-up first, asserts nothing:
 * <ul>
 *   <li>unary 64 B round trips, one at a time: median and p10/p90 (compare with 2 × ib_send_lat's t_typical);</li>
 *   <li>unary 64 B calls, 64 in flight on the default executors: calls/s;</li>
 *   <li>unary calls with 1 MiB requests (rendezvous) and a 4-byte answer, one at a time: MB/s;</li>
 *   <li>one server-streaming call of 1 MiB messages (rendezvous): MB/s (compare with ib_read_bw at 1 MiB);</li>
 *   <li>unary 64 B round trips again with the server's handler and the client's callbacks on the transport's
 *       thread ({@code directExecutor()} on both builders).</li>
 * </ul>
 * MB = 2^20 bytes, as perftest reports. Arguments: {@code [rttCalls [mib]]} (defaults 300 and 64).
 */
public final class RdmaPerfMain {
    private static final String SERVICE = "rdma.perf.Perf";
    private static final MethodDescriptor<byte[], byte[]> PING = MethodDescriptor.create(SERVICE + "/Ping",
            MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);
    private static final MethodDescriptor<byte[], byte[]> SINK = MethodDescriptor.create(SERVICE + "/Sink",
            MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);
    private static final MethodDescriptor<byte[], byte[]> ATTACHED = MethodDescriptor.create(SERVICE + "/Attached",
            MethodDescriptor.MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);
    private static final MethodDescriptor<byte[], byte[]> SOURCE = MethodDescriptor.create(SERVICE + "/Source",
            MethodType.SERVER_STREAMING, Bytes.MARSHALLER, Bytes.MARSHALLER);
    private static final int MIB = 1 << 20;

    private RdmaPerfMain() {
    }

    /** Runs the three measurements and prints them. */
    public static void main(String[] args) throws Exception {
        int rttCalls = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int mib = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        if (System.getProperty("rdmarpc.rdma.spinMicros") == null) {
            System.setProperty("rdmarpc.rdma.spinMicros", "0");
        }
        byte[] block = Bytes.pattern(MIB, 7);
        ServiceDefinition perf = ServiceDefinition.builder(SERVICE)
                .addMethod(PING, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(SINK, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(Bytes.ofInts(req.length));
                    obs.onCompleted();
                }))
                .addMethod(ATTACHED, dev.rdmarpc.core.AttachmentCalls.server(ServerCalls.<dev.rdmarpc.core.WithAttachment<byte[]>,
                        dev.rdmarpc.core.WithAttachment<byte[]>>asyncUnaryCall((req, obs) -> {
                    long size = req.attachment() == null ? 0 : req.attachment().size();
                    req.release();
                    obs.onNext(dev.rdmarpc.core.WithAttachment.of(Bytes.ofInts((int) size)));
                    obs.onCompleted();
                })))
                .addMethod(SOURCE, ServerCalls.asyncServerStreamingCall((req, obs) -> {
                    int n = Bytes.intAt(req, 0);
                    byte[] message = req.length >= 8 ? Arrays.copyOf(block, Bytes.intAt(req, 1)) : block;
                    for (int i = 0; i < n; i++) {
                        obs.onNext(message);
                    }
                    obs.onCompleted();
                }))
                .build();
        // the first connection opens the device (SRQ, slab registration): tens of seconds in an emulated guest
        Duration handshake = Duration.ofMinutes(10);
        RpcServer server = RpcServer.forPort(0).addService(perf).maxInboundMessageSize(4 * MIB).maxInboundAttachmentSize(16 * MIB)
                .handshakeTimeout(handshake).build().start();
        RpcChannel channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).transportMode(TransportMode.RDMA)
                .connectTimeout(handshake).maxInboundMessageSize(4 * MIB).build();
        CallOptions opts = CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.MINUTES);
        try {
            byte[] small = new byte[64];
            ClientCalls.blockingUnaryCall(channel, PING, opts, small);
            String transport = channel.currentTransport();
            System.out.println("rdmarpc-perf: transport " + transport + ", spinMicros "
                    + System.getProperty("rdmarpc.rdma.spinMicros") + ", " + Runtime.getRuntime().availableProcessors()
                    + " CPUs, " + Runtime.version());
            if (!"rdma".equals(transport)) {
                System.out.println("rdmarpc-perf: NOT over RDMA; no figures");
                System.exit(1);
            }

            // 1. unary 64 B round trips
            for (int i = 0; i < rttCalls; i++) {
                ClientCalls.blockingUnaryCall(channel, PING, opts, small);
            }
            RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
            long[] rtt = new long[rttCalls];
            for (int i = 0; i < rttCalls; i++) {
                long t0 = System.nanoTime();
                ClientCalls.blockingUnaryCall(channel, PING, opts, small);
                rtt[i] = System.nanoTime() - t0;
            }
            RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
            Arrays.sort(rtt);
            System.out.printf("rdmarpc-perf: unary 64 B round trip: median %.1f us, p10 %.1f us, p90 %.1f us over %d calls"
                            + " (%d inline, %d eager SENDs)%n", rtt[rttCalls / 2] / 1e3, rtt[rttCalls / 10] / 1e3,
                    rtt[rttCalls * 9 / 10] / 1e3, rttCalls, d.inlineSends(), d.eagerSends());

            // 1b. unary 64 B, 64 calls in flight on the default executors (async stub): calls/s, warm-up first
            inFlight(channel, opts, small, 64, rttCalls);
            long inFlightStart = System.nanoTime();
            int inFlightCalls = inFlight(channel, opts, small, 64, rttCalls * 4);
            System.out.printf("rdmarpc-perf: unary 64 B, 64 in flight, default executors: %.0f calls/s over %d calls%n",
                    inFlightCalls * 1e9 / (System.nanoTime() - inFlightStart), inFlightCalls);

            // 2. unary 1 MiB requests
            int warm = Math.max(2, mib / 8);
            for (int i = 0; i < warm; i++) {
                ClientCalls.blockingUnaryCall(channel, SINK, opts, block);
            }
            before = RdmaMetrics.snapshot();
            long t0 = System.nanoTime();
            for (int i = 0; i < mib; i++) {
                ClientCalls.blockingUnaryCall(channel, SINK, opts, block);
            }
            long nanos = System.nanoTime() - t0;
            d = RdmaMetrics.snapshot().minus(before);
            System.out.printf("rdmarpc-perf: unary 1 MiB requests: %.1f MB/s over %d calls, one at a time"
                            + " (%d rendezvous reads, %d MiB read)%n", mib * 1e9 / nanos, mib, d.rendezvousReads(),
                    d.rendezvousReadBytes() >> 20);

            // 2b. unary calls with a 1 MiB and a 16 MiB attachment from native memory (rendezvous in 1 MiB frames
            // straight from it, through the registration cache), a 4-byte answer, one at a time
            try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
                for (int size : new int[]{MIB, 16 * MIB}) {
                    java.lang.foreign.MemorySegment body = arena.allocate(size, 4096);
                    int calls = Math.max(2, mib * MIB / size);
                    for (int i = 0; i < Math.max(2, calls / 8); i++) {
                        attached(channel, opts, body);
                    }
                    before = RdmaMetrics.snapshot();
                    long a0 = System.nanoTime();
                    for (int i = 0; i < calls; i++) {
                        attached(channel, opts, body);
                    }
                    long an = System.nanoTime() - a0;
                    d = RdmaMetrics.snapshot().minus(before);
                    System.out.printf("rdmarpc-perf: unary %d MiB attachments: %.1f MB/s over %d calls, one at a time"
                                    + " (%d rendezvous reads, %d MiB read, %d attachment registrations held)%n", size / MIB,
                            (double) calls * size / MIB * 1e9 / an, calls, d.rendezvousReads(), d.rendezvousReadBytes() >> 20,
                            RdmaMetrics.ATTACHMENT_REGIONS.get());
                }
            }

            // 3. server streaming 1 MiB messages
            drain(ClientCalls.blockingServerStreamingCall(channel, SOURCE, opts, Bytes.ofInts(warm)));
            before = RdmaMetrics.snapshot();
            t0 = System.nanoTime();
            int got = drain(ClientCalls.blockingServerStreamingCall(channel, SOURCE, opts, Bytes.ofInts(mib)));
            nanos = System.nanoTime() - t0;
            d = RdmaMetrics.snapshot().minus(before);
            System.out.printf("rdmarpc-perf: server streaming 1 MiB messages: %.1f MB/s over %d messages"
                            + " (%d rendezvous reads, %d MiB read)%n", got * 1e9 / nanos, got, d.rendezvousReads(),
                    d.rendezvousReadBytes() >> 20);

            // 3b. a message of 1 MiB arrives whole in one 1 MiB frame (after a BEGIN carrying only its length prefix)
            // and is parsed from its READ destination; one of 1 MiB + 4 B takes two frames and is copied once into its
            // own buffer: both alternately, medians of 3 runs
            byte[] oneFrame = block;
            byte[] twoFrames = Arrays.copyOf(block, MIB + 4);
            double[][] unary = new double[2][3];
            double[][] streamed = new double[2][3];
            long keptBefore = RdmaMetrics.MESSAGE_FRAMES_KEPT.sum();
            for (int run = 0; run < 3; run++) {
                for (int k = 0; k < 2; k++) {
                    byte[] body = k == 0 ? oneFrame : twoFrames;
                    t0 = System.nanoTime();
                    for (int i = 0; i < mib; i++) {
                        ClientCalls.blockingUnaryCall(channel, SINK, opts, body);
                    }
                    unary[k][run] = mib * 1e9 / (System.nanoTime() - t0);
                    t0 = System.nanoTime();
                    got = drain(ClientCalls.blockingServerStreamingCall(channel, SOURCE, opts,
                            Bytes.ofInts(mib, body.length)), body.length);
                    streamed[k][run] = got * 1e9 / (System.nanoTime() - t0);
                }
            }
            for (double[] runs : unary) {
                Arrays.sort(runs);
            }
            for (double[] runs : streamed) {
                Arrays.sort(runs);
            }
            System.out.printf("rdmarpc-perf: kept vs copied: unary 1 MiB (kept) %.1f MB/s, 1 MiB + 4 B (copied) %.1f MB/s,"
                            + " ratio %.2f; server streaming kept %.1f MB/s, copied %.1f MB/s, ratio %.2f"
                            + " (medians of 3; %d frames kept; runs: unary %s / %s, streaming %s / %s)%n", unary[0][1],
                    unary[1][1], unary[0][1] / unary[1][1], streamed[0][1], streamed[1][1],
                    streamed[0][1] / streamed[1][1], RdmaMetrics.MESSAGE_FRAMES_KEPT.sum() - keptBefore,
                    Arrays.toString(unary[0]), Arrays.toString(unary[1]), Arrays.toString(streamed[0]),
                    Arrays.toString(streamed[1]));
        } finally {
            channel.shutdownNow();
            server.shutdownNow();
            channel.awaitTermination(1, TimeUnit.MINUTES);
            server.awaitTermination(1, TimeUnit.MINUTES);
        }

        // 4. unary 64 B round trips again, the handler run on the poller thread (server directExecutor)
        RpcServer direct = RpcServer.forPort(0).addService(perf).directExecutor().handshakeTimeout(handshake).build()
                .start();
        RpcChannel directChannel = RpcChannel.forAddress("127.0.0.1", direct.getPort())
                .transportMode(TransportMode.RDMA).directExecutor().connectTimeout(handshake).build();
        try {
            byte[] small = new byte[64];
            for (int i = 0; i < rttCalls; i++) {
                ClientCalls.blockingUnaryCall(directChannel, PING, opts, small);
            }
            long[] rtt = new long[rttCalls];
            for (int i = 0; i < rttCalls; i++) {
                long t0 = System.nanoTime();
                ClientCalls.blockingUnaryCall(directChannel, PING, opts, small);
                rtt[i] = System.nanoTime() - t0;
            }
            Arrays.sort(rtt);
            System.out.printf("rdmarpc-perf: unary 64 B round trip, directExecutor: median %.1f us, p10 %.1f us,"
                            + " p90 %.1f us over %d calls%n", rtt[rttCalls / 2] / 1e3, rtt[rttCalls / 10] / 1e3,
                    rtt[rttCalls * 9 / 10] / 1e3, rttCalls);
        } finally {
            directChannel.shutdownNow();
            direct.shutdownNow();
            directChannel.awaitTermination(1, TimeUnit.MINUTES);
            direct.awaitTermination(1, TimeUnit.MINUTES);
        }
    }

    /** Makes {@code calls} async unary calls with at most {@code window} in flight; returns once all answered. */
    private static int inFlight(RpcChannel channel, CallOptions opts, byte[] body, int window, int calls)
            throws InterruptedException {
        java.util.concurrent.Semaphore room = new java.util.concurrent.Semaphore(window);
        java.util.concurrent.CountDownLatch answered = new java.util.concurrent.CountDownLatch(calls);
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        dev.rdmarpc.core.StreamObserver<byte[]> observer = new dev.rdmarpc.core.StreamObserver<>() {
            @Override
            public void onNext(byte[] value) {
            }

            @Override
            public void onError(Throwable t) {
                failure.compareAndSet(null, t);
                room.release();
                answered.countDown();
            }

            @Override
            public void onCompleted() {
                room.release();
                answered.countDown();
            }
        };
        for (int i = 0; i < calls; i++) {
            room.acquire();
            ClientCalls.asyncUnaryCall(channel.newCall(PING, opts), body, observer);
        }
        if (!answered.await(30, TimeUnit.MINUTES) || failure.get() != null) {
            throw new IllegalStateException("calls in flight did not all succeed", failure.get());
        }
        return calls;
    }

    /** One unary call with {@code body} as its request's attachment; waits for the answer. */
    private static void attached(RpcChannel channel, CallOptions opts, java.lang.foreign.MemorySegment body) throws Exception {
        java.util.concurrent.CompletableFuture<byte[]> answer = new java.util.concurrent.CompletableFuture<>();
        ClientCalls.asyncUnaryCall(dev.rdmarpc.core.AttachmentCalls.client(channel.newCall(ATTACHED, opts)),
                dev.rdmarpc.core.WithAttachment.of(new byte[]{1}, body, null),
                new dev.rdmarpc.core.StreamObserver<>() {
                    @Override
                    public void onNext(dev.rdmarpc.core.WithAttachment<byte[]> value) {
                        value.release();
                        answer.complete(value.message());
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        if (Bytes.intAt(answer.get(30, TimeUnit.MINUTES), 0) != body.byteSize()) {
            throw new IllegalStateException("the server saw another attachment size");
        }
    }

    private static int drain(Iterator<byte[]> it) {
        return drain(it, MIB);
    }

    private static int drain(Iterator<byte[]> it, int size) {
        int n = 0;
        while (it.hasNext()) {
            if (it.next().length != size) {
                throw new IllegalStateException("a streamed message is not " + size + " bytes");
            }
            n++;
        }
        return n;
    }
}
