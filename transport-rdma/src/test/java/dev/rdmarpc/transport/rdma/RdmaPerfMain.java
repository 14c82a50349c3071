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
 *   <li>both again with protobuf messages, received by {@code ProtoMarshaller} and by {@code LendingMarshaller}
 *       ({@link LentPerf});</li>
 *   <li>unary 64 B round trips again with the server's handler and the client's callbacks on the transport's
 *       thread ({@code directExecutor()} on both builders).</li>
 * </ul>
 * MB = 2^20 bytes, as perftest reports. Arguments: {@code [rttCalls [mib]]} (defaults 300 and 64): measured round
 * trips, MiB per throughput window. Each measurement first warms up until the JIT has settled ({@link PerfPhases}); each
 * throughput figure is the median of three measured windows, and every window says how much of it the JIT compilers
 * took. Measurements by name,
 * for {@code -Drdmarpc.perf.phases} ({@link PerfPhases}, which can also switch a profiler on around each): {@code rtt},
 * {@code inflight}, {@code unary}, {@code attach1}, {@code attach16}, {@code stream}, {@code protoUnary},
 * {@code lentUnary}, {@code protoStream}, {@code lentStream}, {@code kept}, {@code direct}.
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
    /**
     * Bulk measurements warm up on {@value #WARM_CALLS} messages of {@value #WARM_SIZE} bytes per batch (rendezvous
     * too, at a sixty-fourth of the bytes) and two calls of the measured size (streaming: {@value #WARM_STREAM_MIB}
     * messages of 1 MiB, after one stream as long as the measured one before the first batch): the per-call code
     * runs often enough to be compiled, and the measured size's branches are in the profile the compiler used.
     */
    private static final int WARM_CALLS = 200;
    /** 1 MiB messages of the stream each streaming warm-up batch also makes. */
    private static final int WARM_STREAM_MIB = 8;
    /** 64 B round trips per warm-up batch. */
    private static final int WARM_ROUND_TRIPS = 500;
    private static final int WARM_SIZE = 16 << 10;
    /** Calls in flight in the bulk measurements that keep several READs going at once. */
    private static final int DEPTH = 4;

    private RdmaPerfMain() {
    }

    /** Runs the three measurements and prints them. */
    public static void main(String[] args) throws Exception {
        int rttCalls = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int mib = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        PerfPhases phases = PerfPhases.fromSystemProperties();
        if (System.getProperty("rdmarpc.rdma.spinMicros") == null) {
            System.setProperty("rdmarpc.rdma.spinMicros", "0");
        }
        byte[] block = Bytes.pattern(MIB, 7);
        byte[] warmBlock = Arrays.copyOf(block, WARM_SIZE);
        ServiceDefinition perf = ScaleService.withPingAndSink(ServiceDefinition.builder(SERVICE), PING, SINK)
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
        RpcServer server = RpcServer.forPort(0).addService(perf).addService(LentPerf.service())
                .maxInboundMessageSize(4 * MIB).maxInboundAttachmentSize(16 * MIB).handshakeTimeout(handshake).build()
                .start();
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
            if (phases.runs("rtt")) {
                long[] rtt = new long[rttCalls];
                long[] warmRtt = new long[WARM_ROUND_TRIPS];
                PerfPhases.warmUp("64 B round trips", WARM_ROUND_TRIPS,
                        () -> roundTrips(channel, opts, small, warmRtt));
                RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
                try (PerfPhases.Measured m = phases.measure()) {
                    roundTrips(channel, opts, small, rtt);
                }
                RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
                Arrays.sort(rtt);
                System.out.printf("rdmarpc-perf: unary 64 B round trip: median %.1f us, p10 %.1f us, p90 %.1f us over %d calls"
                                + " (%d inline, %d eager SENDs)%n", rtt[rttCalls / 2] / 1e3, rtt[rttCalls / 10] / 1e3,
                        rtt[rttCalls * 9 / 10] / 1e3, rttCalls, d.inlineSends(), d.eagerSends());
            }

            // 1b. unary 64 B, 64 calls in flight on the default executors (async stub): calls/s, warm-up first
            if (phases.runs("inflight")) {
                PerfPhases.warmUp("64 B, 64 in flight", WARM_ROUND_TRIPS,
                        () -> inFlight(channel, opts, small, 64, WARM_ROUND_TRIPS));
                int inFlightCalls;
                long nanos;
                try (PerfPhases.Measured m = phases.measure()) {
                    long t0 = System.nanoTime();
                    inFlightCalls = inFlight(channel, opts, small, 64, rttCalls * 4);
                    nanos = System.nanoTime() - t0;
                }
                System.out.printf("rdmarpc-perf: unary 64 B, 64 in flight, default executors: %.0f calls/s over %d calls%n",
                        inFlightCalls * 1e9 / nanos, inFlightCalls);
            }

            // 2. unary 1 MiB requests
            if (phases.runs("unary")) {
                PerfPhases.warmUp("unary 1 MiB", WARM_CALLS + 2, () -> {
                    sinks(channel, opts, warmBlock, WARM_CALLS);
                    sinks(channel, opts, block, 2);
                });
                RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
                double[] mbs = phases.measureWindows("unary 1 MiB requests",
                        () -> mib * 1e9 / sinks(channel, opts, block, mib));
                RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
                System.out.printf("rdmarpc-perf: unary 1 MiB requests: %.1f MB/s (median of %s) over %d calls per window,"
                                + " one at a time (%d rendezvous reads, %d MiB read)%n", PerfPhases.median(mbs),
                        PerfPhases.list(mbs, "%.1f"), mib, d.rendezvousReads(), d.rendezvousReadBytes() >> 20);
            }

            // 2a. the same with 4 calls in flight: 4 READs at once, as ib_read_bw keeps several in flight
            if (phases.runs("unary4")) {
                inFlightFigure(phases, "unary 1 MiB requests", () -> sinks(channel, opts, warmBlock, WARM_CALLS),
                        done -> ClientCalls.asyncUnaryCall(channel.newCall(SINK, opts), block, typed(done)), mib);
            }

            // 2b. unary calls with a 1 MiB and a 16 MiB attachment from native memory (rendezvous in 1 MiB frames
            // straight from it, through the registration cache), a 4-byte answer, one at a time
            try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
                for (int size : new int[]{MIB, 16 * MIB}) {
                    if (!phases.runs("attach" + size / MIB)) {
                        continue;
                    }
                    java.lang.foreign.MemorySegment body = arena.allocate(size, 4096);
                    int calls = Math.max(2, mib * MIB / size);
                    PerfPhases.warmUp(size / MIB + " MiB attachments", WARM_CALLS + 2, () -> {
                        attachedCalls(channel, opts, body.asSlice(0, WARM_SIZE), WARM_CALLS);
                        attachedCalls(channel, opts, body, 2);
                    });
                    RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
                    long keptBefore = RdmaMetrics.MESSAGE_FRAMES_KEPT.sum();
                    long copiedBefore = RdmaMetrics.MESSAGE_FRAMES_COPIED.sum();
                    double[] mbs = phases.measureWindows("unary " + size / MIB + " MiB attachments",
                            () -> (double) calls * size / MIB * 1e9 / attachedCalls(channel, opts, body, calls));
                    RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
                    System.out.printf("rdmarpc-perf: unary %d MiB attachments: %.1f MB/s (median of %s) over %d calls per"
                                    + " window, one at a time (%d rendezvous reads, %d MiB read, %d attachment registrations"
                                    + " held; MESSAGE frames received: %d kept, %d copied)%n", size / MIB,
                            PerfPhases.median(mbs), PerfPhases.list(mbs, "%.1f"), calls, d.rendezvousReads(),
                            d.rendezvousReadBytes() >> 20,
                            RdmaMetrics.ATTACHMENT_REGIONS.get(), RdmaMetrics.MESSAGE_FRAMES_KEPT.sum() - keptBefore,
                            RdmaMetrics.MESSAGE_FRAMES_COPIED.sum() - copiedBefore);
                }
                // 2c. 1 MiB attachments with 4 calls in flight, all four from the same native memory
                if (phases.runs("attach1x4")) {
                    java.lang.foreign.MemorySegment body = arena.allocate(MIB, 4096);
                    inFlightFigure(phases, "unary 1 MiB attachments",
                            () -> attachedCalls(channel, opts, body.asSlice(0, WARM_SIZE), WARM_CALLS),
                            done -> ClientCalls.asyncUnaryCall(dev.rdmarpc.core.AttachmentCalls.client(channel.newCall(
                                    ATTACHED, opts)), dev.rdmarpc.core.WithAttachment.of(new byte[]{1}, body, null),
                                    typed(done)), mib);
                }
            }

            // 3. server streaming 1 MiB messages
            if (phases.runs("stream")) {
                // first a stream as long as the measured one: it takes the flow-control paths that one will take
                drain(ClientCalls.blockingServerStreamingCall(channel, SOURCE, opts, Bytes.ofInts(mib)));
                PerfPhases.warmUp("streaming 1 MiB", WARM_CALLS + WARM_STREAM_MIB, () -> {
                    drain(ClientCalls.blockingServerStreamingCall(channel, SOURCE, opts, Bytes.ofInts(WARM_CALLS,
                            WARM_SIZE)), WARM_SIZE);
                    drain(ClientCalls.blockingServerStreamingCall(channel, SOURCE, opts,
                            Bytes.ofInts(WARM_STREAM_MIB)));
                });
                RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
                double[] mbs = phases.measureWindows("server streaming 1 MiB messages", () -> {
                    long t0 = System.nanoTime();
                    int got = drain(ClientCalls.blockingServerStreamingCall(channel, SOURCE, opts, Bytes.ofInts(mib)));
                    return got * 1e9 / (System.nanoTime() - t0);
                });
                RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
                System.out.printf("rdmarpc-perf: server streaming 1 MiB messages: %.1f MB/s (median of %s) over %d messages"
                                + " per window (%d rendezvous reads, %d MiB read)%n", PerfPhases.median(mbs),
                        PerfPhases.list(mbs, "%.1f"), mib, d.rendezvousReads(), d.rendezvousReadBytes() >> 20);
            }

            // 3a. the unary and streaming 1 MiB figures with protobuf messages, copied and lent
            LentPerf.measure(phases, channel, opts, mib);

            // 3b. a message of 1 MiB arrives whole in one 1 MiB frame (after a BEGIN carrying only its length prefix)
            // and is parsed from its READ destination; one of 1 MiB + 4 B takes two frames and is copied once into its
            // own buffer: both alternately, medians of 3 runs
            if (phases.runs("kept")) {
                byte[] oneFrame = block;
                byte[] twoFrames = Arrays.copyOf(block, MIB + 4);
                double[][] unary = new double[2][3];
                double[][] streamed = new double[2][3];
                long keptBefore = RdmaMetrics.MESSAGE_FRAMES_KEPT.sum();
                for (int run = 0; run < 3; run++) {
                    for (int k = 0; k < 2; k++) {
                        byte[] body = k == 0 ? oneFrame : twoFrames;
                        long t0 = System.nanoTime();
                        for (int i = 0; i < mib; i++) {
                            ClientCalls.blockingUnaryCall(channel, SINK, opts, body);
                        }
                        unary[k][run] = mib * 1e9 / (System.nanoTime() - t0);
                        t0 = System.nanoTime();
                        int got = drain(ClientCalls.blockingServerStreamingCall(channel, SOURCE, opts,
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
            }
        } finally {
            channel.shutdownNow();
            server.shutdownNow();
            channel.awaitTermination(1, TimeUnit.MINUTES);
            server.awaitTermination(1, TimeUnit.MINUTES);
        }

        // 4. unary 64 B round trips again, the handler run on the poller thread (server directExecutor)
        if (!phases.runs("direct")) {
            return;
        }
        RpcServer direct = RpcServer.forPort(0).addService(perf).directExecutor().handshakeTimeout(handshake).build()
                .start();
        RpcChannel directChannel = RpcChannel.forAddress("127.0.0.1", direct.getPort())
                .transportMode(TransportMode.RDMA).directExecutor().connectTimeout(handshake).build();
        try {
            byte[] small = new byte[64];
            long[] rtt = new long[rttCalls];
            long[] warmRtt = new long[WARM_ROUND_TRIPS];
            PerfPhases.warmUp("64 B round trips, directExecutor", WARM_ROUND_TRIPS,
                    () -> roundTrips(directChannel, opts, small, warmRtt));
            try (PerfPhases.Measured m = phases.measure()) {
                roundTrips(directChannel, opts, small, rtt);
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

    /** One blocking 64 B round trip per element of {@code nanos}, each one's time stored there. */
    private static void roundTrips(RpcChannel channel, CallOptions opts, byte[] small, long[] nanos) {
        for (int i = 0; i < nanos.length; i++) {
            long t0 = System.nanoTime();
            ClientCalls.blockingUnaryCall(channel, PING, opts, small);
            nanos[i] = System.nanoTime() - t0;
        }
    }

    /** {@code calls} blocking unary calls with {@code body} as the request, one at a time; returns their time. */
    private static long sinks(RpcChannel channel, CallOptions opts, byte[] body, int calls) {
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            ClientCalls.blockingUnaryCall(channel, SINK, opts, body);
        }
        return System.nanoTime() - t0;
    }

    /** {@code calls} unary calls with {@code body} as the attachment, one at a time; returns their time. */
    private static long attachedCalls(RpcChannel channel, CallOptions opts, java.lang.foreign.MemorySegment body, int calls)
            throws Exception {
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            attached(channel, opts, body);
        }
        return System.nanoTime() - t0;
    }

    /**
     * A 1 MiB figure with {@value #DEPTH} calls in flight: warms up with {@code warm} and a few such calls, then makes
     * {@code calls} of them and prints MB/s as "{@code what}, N in flight".
     */
    private static void inFlightFigure(PerfPhases phases, String what, PerfPhases.Batch warm, CallStarter call, int calls)
            throws Exception {
        PerfPhases.warmUp(what + ", " + DEPTH + " in flight", WARM_CALLS, () -> {
            warm.run();
            inFlight(DEPTH, 2 * DEPTH, call);
        });
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        long nanos;
        try (PerfPhases.Measured m = phases.measure()) {
            long t0 = System.nanoTime();
            inFlight(DEPTH, calls, call);
            nanos = System.nanoTime() - t0;
        }
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        System.out.printf("rdmarpc-perf: %s, %d in flight: %.1f MB/s over %d calls (%d rendezvous reads, %d MiB read)%n",
                what, DEPTH, calls * 1e9 / nanos, calls, d.rendezvousReads(), d.rendezvousReadBytes() >> 20);
    }

    /** Makes {@code calls} async 64 B echo calls with at most {@code window} in flight; returns once all answered. */
    private static int inFlight(RpcChannel channel, CallOptions opts, byte[] body, int window, int calls)
            throws InterruptedException {
        return inFlight(window, calls, done -> ClientCalls.asyncUnaryCall(channel.newCall(PING, opts), body, typed(done)));
    }

    /** Starts one call that reports its end to {@code done}. */
    private interface CallStarter {
        /** Starts the call. */
        void start(dev.rdmarpc.core.StreamObserver<Object> done);
    }

    /** The observer of any response type, as the type a call wants (it only looks at attachments to release them). */
    @SuppressWarnings("unchecked")
    private static <T> dev.rdmarpc.core.StreamObserver<T> typed(dev.rdmarpc.core.StreamObserver<Object> observer) {
        return (dev.rdmarpc.core.StreamObserver<T>) (dev.rdmarpc.core.StreamObserver<?>) observer;
    }

    /**
     * Starts {@code calls} calls with at most {@code window} in flight (a response with an attachment is released as it
     * arrives); returns once all answered, or throws if one failed.
     */
    private static int inFlight(int window, int calls, CallStarter starter) throws InterruptedException {
        java.util.concurrent.Semaphore room = new java.util.concurrent.Semaphore(window);
        java.util.concurrent.CountDownLatch answered = new java.util.concurrent.CountDownLatch(calls);
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        dev.rdmarpc.core.StreamObserver<Object> observer = new dev.rdmarpc.core.StreamObserver<>() {
            @Override
            public void onNext(Object value) {
                if (value instanceof dev.rdmarpc.core.WithAttachment<?> attached) {
                    attached.release();
                }
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
            starter.start(observer);
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
