package dev.rdmarpc.transport.rdma;

import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.protobuf.LendingMarshaller;
import dev.rdmarpc.core.protobuf.LentMessage;
import dev.rdmarpc.core.protobuf.ProtoMarshaller;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.Iterator;

/**
 * {@link RdmaPerfMain}'s protobuf figures: the unary 1 MiB and server-streaming 1 MiB measurements with protobuf
 * messages ({@code BytesValue}), each received once by {@link ProtoMarshaller} (a fresh array per message, which the
 * JVM zeroes before the copy) and once by {@link LendingMarshaller} (a lent array, reused after the receiver's
 * release). Measurements by name: {@code protoUnary}, {@code lentUnary}, {@code protoStream}, {@code lentStream}.
 */
final class LentPerf {
    private static final String SERVICE = "rdma.perf.Proto";
    private static final ProtoMarshaller<BytesValue> PROTO = ProtoMarshaller.of(BytesValue.getDefaultInstance());
    /** Unary calls whose request the server parses with {@code ProtoMarshaller}; the answer is the request's size. */
    private static final MethodDescriptor<BytesValue, BytesValue> SINK_COPIED = MethodDescriptor.create(
            SERVICE + "/SinkCopied", MethodType.UNARY, PROTO, PROTO);
    /** The same call, its request lent on the server ({@link LendingMarshaller#lendingRequests}). */
    private static final MethodDescriptor<BytesValue, BytesValue> SINK_LENT = MethodDescriptor.create(
            SERVICE + "/SinkLent", MethodType.UNARY, PROTO, PROTO);
    /** A stream of {@code n} messages of {@code size} bytes (the request holds the two ints). */
    private static final MethodDescriptor<BytesValue, BytesValue> SOURCE = MethodDescriptor.create(
            SERVICE + "/Source", MethodType.SERVER_STREAMING, PROTO, PROTO);
    private static final MethodDescriptor<BytesValue, LentMessage<BytesValue>> SOURCE_LENT =
            LendingMarshaller.lendingResponses(SOURCE);
    private static final int MIB = 1 << 20;
    /**
     * The bytes field of a 1 MiB message: with its tag and 3-byte length the message is 1 MiB on the wire, so that it
     * arrives whole in one rendezvous frame, as {@code RdmaPerfMain}'s 1 MiB byte arrays do.
     */
    private static final int BODY = MIB - 4;
    /** Warm-up as {@link RdmaPerfMain}'s: batches of 16 KiB messages (lent too: over 4 KiB) and a few of 1 MiB. */
    private static final int WARM_CALLS = 200;
    private static final int WARM_SIZE = 16 << 10;
    private static final int WARM_STREAM_MIB = 8;

    private LentPerf() {
    }

    /** The server's side: both sinks and the source. */
    static ServiceDefinition service() {
        BytesValue mib = message(BODY);
        return ServiceDefinition.builder(SERVICE)
                .addMethod(SINK_COPIED, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(sizeOf(req));
                    obs.onCompleted();
                }))
                .addMethod(LendingMarshaller.lendingRequests(SINK_LENT), ServerCalls.asyncUnaryCall((req, obs) -> {
                    BytesValue size = sizeOf(req.message());
                    req.release();
                    obs.onNext(size);
                    obs.onCompleted();
                }))
                .addMethod(SOURCE, ServerCalls.asyncServerStreamingCall((req, obs) -> {
                    byte[] counts = req.getValue().toByteArray();
                    int n = Bytes.intAt(counts, 0);
                    int size = Bytes.intAt(counts, 1);
                    BytesValue message = size == BODY ? mib : message(size);
                    for (int i = 0; i < n; i++) {
                        obs.onNext(message);
                    }
                    obs.onCompleted();
                }))
                .build();
    }

    /** Runs the measurements {@code phases} names, {@code mib} MiB per window. */
    static void measure(PerfPhases phases, RpcChannel channel, CallOptions opts, int mib) throws Exception {
        for (boolean lent : new boolean[]{false, true}) {
            if (phases.runs(lent ? "lentUnary" : "protoUnary")) {
                measureUnary(phases, channel, opts, mib, lent);
            }
        }
        for (boolean lent : new boolean[]{false, true}) {
            if (phases.runs(lent ? "lentStream" : "protoStream")) {
                measureStream(phases, channel, opts, mib, lent);
            }
        }
    }

    /** Unary calls with a 1 MiB request, one at a time, the server's copy received copied or lent. */
    private static void measureUnary(PerfPhases phases, RpcChannel channel, CallOptions opts, int mib, boolean lent)
            throws Exception {
        String how = lent ? "lent" : "copied";
        MethodDescriptor<BytesValue, BytesValue> sink = lent ? SINK_LENT : SINK_COPIED;
        BytesValue block = message(BODY);
        BytesValue warm = message(WARM_SIZE);
        PerfPhases.warmUp("protobuf unary 1 MiB, " + how, WARM_CALLS + 2, () -> {
            sinks(channel, opts, sink, warm, WARM_CALLS);
            sinks(channel, opts, sink, block, 2);
        });
        figure(phases, "protobuf unary 1 MiB requests, " + how, mib + " calls per window, one at a time",
                () -> mib * 1e9 / sinks(channel, opts, sink, block, mib));
    }

    /** One server-streaming call of 1 MiB messages per window, the client's copy received copied or lent. */
    private static void measureStream(PerfPhases phases, RpcChannel channel, CallOptions opts, int mib, boolean lent)
            throws Exception {
        String how = lent ? "lent" : "copied";
        // first a stream as long as the measured one: it takes the flow-control paths that one will take
        stream(channel, opts, lent, mib, BODY);
        PerfPhases.warmUp("protobuf streaming 1 MiB, " + how, WARM_CALLS + WARM_STREAM_MIB, () -> {
            stream(channel, opts, lent, WARM_CALLS, WARM_SIZE);
            stream(channel, opts, lent, WARM_STREAM_MIB, BODY);
        });
        figure(phases, "protobuf server streaming 1 MiB messages, " + how, mib + " messages per window", () -> {
            long t0 = System.nanoTime();
            int got = stream(channel, opts, lent, mib, BODY);
            return got * 1e9 / (System.nanoTime() - t0);
        });
    }

    /**
     * Measures {@code run}'s windows and prints the figure as "{@code what}: N MB/s (median of ...) over
     * {@code over} (rendezvous reads; collections)".
     */
    private static void figure(PerfPhases phases, String what, String over, PerfPhases.Run run) throws Exception {
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        Collections gcBefore = Collections.now();
        double[] mbs = phases.measureWindows(what, run);
        Collections gc = Collections.now().minus(gcBefore);
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        System.out.printf("rdmarpc-perf: %s: %.1f MB/s (median of %s) over %s (%d rendezvous reads; %d collections, %d ms"
                        + " in them)%n", what, PerfPhases.median(mbs), PerfPhases.list(mbs, "%.1f"), over,
                d.rendezvousReads(), gc.count(), gc.millis());
    }

    /** {@code calls} blocking unary calls of {@code body}, one at a time; returns their time. */
    private static long sinks(RpcChannel channel, CallOptions opts, MethodDescriptor<BytesValue, BytesValue> sink,
                              BytesValue body, int calls) {
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            BytesValue size = ClientCalls.blockingUnaryCall(channel, sink, opts, body);
            if (Bytes.intAt(size.getValue().toByteArray(), 0) != body.getValue().size()) {
                throw new IllegalStateException("the server saw another request size");
            }
        }
        return System.nanoTime() - t0;
    }

    /** One stream of {@code n} messages of {@code size} bytes, each checked (and released when lent); returns n. */
    private static int stream(RpcChannel channel, CallOptions opts, boolean lent, int n, int size) {
        BytesValue request = BytesValue.of(ByteString.copyFrom(Bytes.ofInts(n, size)));
        int got = 0;
        if (lent) {
            Iterator<LentMessage<BytesValue>> it = ClientCalls.blockingServerStreamingCall(channel, SOURCE_LENT, opts,
                    request);
            while (it.hasNext()) {
                try (LentMessage<BytesValue> m = it.next()) {
                    got += check(m.message(), size);
                }
            }
        } else {
            Iterator<BytesValue> it = ClientCalls.blockingServerStreamingCall(channel, SOURCE, opts, request);
            while (it.hasNext()) {
                got += check(it.next(), size);
            }
        }
        if (got != n) {
            throw new IllegalStateException("the stream had " + got + " messages, not " + n);
        }
        return got;
    }

    /** The JVM's garbage collections: how many, and their milliseconds, over every collector. */
    private record Collections(long count, long millis) {
        /** The collections so far. */
        static Collections now() {
            long count = 0;
            long millis = 0;
            for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                count += Math.max(0, gc.getCollectionCount());
                millis += Math.max(0, gc.getCollectionTime());
            }
            return new Collections(count, millis);
        }

        /** The collections since {@code before}. */
        Collections minus(Collections before) {
            return new Collections(count - before.count, millis - before.millis);
        }
    }

    private static int check(BytesValue message, int size) {
        if (message.getValue().size() != size) {
            throw new IllegalStateException("a streamed message is not " + size + " bytes");
        }
        return 1;
    }

    private static BytesValue sizeOf(BytesValue request) {
        return BytesValue.of(ByteString.copyFrom(Bytes.ofInts(request.getValue().size())));
    }

    private static BytesValue message(int size) {
        return BytesValue.of(ByteString.copyFrom(Bytes.pattern(size, 7)));
    }
}
