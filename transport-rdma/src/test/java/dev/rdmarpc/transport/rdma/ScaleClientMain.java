package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.TransportMode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One client JVM of the scale harness ({@link ScaleMain} starts several): holds RDMA connections to the server, one
 * {@link RpcChannel} each, and makes calls on them when told. Arguments: {@code host port}. Commands, one a line on
 * standard input, each answered by one line on standard output:
 * <ul>
 *   <li>{@code OPEN n}: opens channels until it holds {@code n}, each forced to RDMA and checked with one 64 B call;
 *       answers {@code OPENED n rdma=k} ({@code k} of them on RDMA);</li>
 *   <li>{@code RUN size calls}: on every channel at once, {@code calls} unary calls of {@code size} bytes one after the
 *       other (64 B echoed, larger sunk); answers {@code DONE made failed nanos};</li>
 *   <li>{@code QUIT}: closes its channels and exits.</li>
 * </ul>
 */
public final class ScaleClientMain {
    private static final Duration SETUP = Duration.ofMinutes(10);
    /** RDMA, unless {@code rdmarpc.scale.transport} says otherwise (TCP: a run of the harness on a host without RDMA). */
    private static final TransportMode MODE = TransportMode.valueOf(System.getProperty("rdmarpc.scale.transport", "RDMA"));
    private static final CallOptions OPTIONS = CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.MINUTES);

    private final String host;
    private final int port;
    private final List<RpcChannel> channels = new ArrayList<>();

    private ScaleClientMain(String host, int port) {
        this.host = host;
        this.port = port;
    }

    /** Runs the commands read from standard input. */
    public static void main(String[] args) throws Exception {
        ScaleClientMain client = new ScaleClientMain(args[0], Integer.parseInt(args[1]));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+");
            switch (w[0]) {
                case "OPEN" -> System.out.println(client.open(Integer.parseInt(w[1])));
                case "RUN" -> System.out.println(client.run(Integer.parseInt(w[1]), Integer.parseInt(w[2])));
                case "QUIT" -> {
                    client.close();
                    System.out.println("BYE");
                    System.exit(0);
                }
                default -> System.out.println("UNKNOWN " + line);
            }
            System.out.flush();
        }
        client.close();
        System.exit(0);
    }

    private String open(int n) {
        int rdma = 0;
        while (channels.size() < n) {
            RpcChannel ch = RpcChannel.forAddress(host, port).transportMode(MODE).connectTimeout(SETUP)
                    .maxInboundMessageSize(4 << 20).build();
            channels.add(ch);
            ClientCalls.blockingUnaryCall(ch, ScaleService.PING, OPTIONS, new byte[64]);
        }
        for (RpcChannel ch : channels) {
            if ("rdma".equals(ch.currentTransport())) {
                rdma++;
            }
        }
        return "OPENED " + channels.size() + " rdma=" + rdma;
    }

    /** Every channel makes {@code calls} calls of {@code size} bytes, one after the other; all channels at once. */
    private String run(int size, int calls) throws InterruptedException {
        MethodDescriptor<byte[], byte[]> method = ScaleService.methodFor(size);
        byte[] body = Bytes.pattern(size, size);
        CountDownLatch done = new CountDownLatch(channels.size());
        AtomicInteger made = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        long t0 = System.nanoTime();
        for (RpcChannel ch : channels) {
            new Object() {
                int left = calls;

                void next() {
                    ClientCalls.asyncUnaryCall(ch.newCall(method, OPTIONS), body, new StreamObserver<>() {
                        @Override
                        public void onNext(byte[] value) {
                        }

                        @Override
                        public void onError(Throwable t) {
                            failed.incrementAndGet();
                            firstFailure.compareAndSet(null, t);
                            finished();
                        }

                        @Override
                        public void onCompleted() {
                            made.incrementAndGet();
                            finished();
                        }
                    });
                }

                void finished() {
                    if (--left > 0) {
                        next();
                    } else {
                        done.countDown();
                    }
                }
            }.next();
        }
        done.await();
        long nanos = System.nanoTime() - t0;
        Throwable f = firstFailure.get();
        return "DONE " + made.get() + " " + failed.get() + " " + nanos + (f == null ? "" : " first failure: " + f);
    }

    private void close() throws InterruptedException {
        for (RpcChannel ch : channels) {
            ch.shutdownNow();
        }
        for (RpcChannel ch : channels) {
            ch.awaitTermination(1, TimeUnit.MINUTES);
        }
        channels.clear();
    }
}
