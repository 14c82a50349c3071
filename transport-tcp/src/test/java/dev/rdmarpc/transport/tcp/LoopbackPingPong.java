package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A quick loopback latency measurement (not a test, not JMH): 64-byte frames bounced between a
 * client and an echoing server FrameConnection, per I/O flavor. "io" mode sends each ping from the
 * client's I/O thread as the pong arrives (the transport alone); "app" mode sends from an
 * application thread that parks until the pong is back (adds the hand-offs a caller sees).
 * Run: {@code java -cp <test classpath> dev.rdmarpc.transport.tcp.LoopbackPingPong [roundTrips] [rounds]}.
 */
public final class LoopbackPingPong {
    private static final int PAYLOAD = 64 - 16;

    private LoopbackPingPong() {
    }

    public static void main(String[] args) throws Exception {
        int roundTrips = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        List<String> flavors = TestTransports.flavors();
        System.out.printf(Locale.ROOT, "%d round trips of 64-byte frames, %d rounds, %d cores, flavors %s%n",
                roundTrips, rounds, Runtime.getRuntime().availableProcessors(), flavors);
        for (int r = 0; r < rounds; r++) {
            for (String io : flavors) {
                for (boolean fromIoThread : new boolean[] {true, false}) {
                    long[] rtt = run(io, roundTrips, fromIoThread);
                    System.out.printf(Locale.ROOT, "round %d %-8s %-3s median %6.1f us  p90 %6.1f us  p99 %6.1f us%n", r, io,
                            fromIoThread ? "io" : "app", micros(rtt, 0.50), micros(rtt, 0.90), micros(rtt, 0.99));
                }
            }
        }
    }

    private static double micros(long[] sorted, double q) {
        return sorted[(int) Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))] / 1_000.0;
    }

    /** Sorted round-trip times in ns, after as many warm-up round trips. */
    private static long[] run(String io, int n, boolean fromIoThread) throws Exception {
        try (TcpServerTransport server = new TcpServerTransport(TestTransports.config(io));
             TcpClientTransport client = new TcpClientTransport(TestTransports.config(io))) {
            InetSocketAddress address = server.bind(TestTransports.ANY_LOOPBACK_PORT, new RecordingHandler.Factory(true));
            Pinger pinger = new Pinger(2 * n, fromIoThread);
            FrameConnection c = client.connect(address, conn -> {
                pinger.connection = conn;
                return pinger;
            }, 5_000).get(60, TimeUnit.SECONDS);
            c.send(TestFrames.hello());
            if (fromIoThread) {
                pinger.sentAt = System.nanoTime();
                c.send(ping());
                if (!pinger.done.await(120, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("ping-pong stalled at " + pinger.count);
                }
            } else {
                pinger.waiter = Thread.currentThread();
                for (int i = 0; i < 2 * n; i++) {
                    int expected = pinger.count + 1;
                    pinger.sentAt = System.nanoTime();
                    c.send(ping());
                    while (pinger.count < expected) {
                        LockSupport.park();
                    }
                }
            }
            long[] measured = Arrays.copyOfRange(pinger.samples, n, 2 * n);
            Arrays.sort(measured);
            return measured;
        }
    }

    private static dev.rdmarpc.core.buffer.SlabBuffer ping() {
        return TestFrames.frame(FrameType.MESSAGE, 0, 1, 0, new byte[PAYLOAD]);
    }

    /** The client side: times each pong and, in "io" mode, sends the next ping at once. */
    private static final class Pinger implements FrameHandler {
        final long[] samples;
        final boolean fromIoThread;
        final CountDownLatch done = new CountDownLatch(1);
        volatile FrameConnection connection;
        volatile Thread waiter;
        volatile long sentAt;
        volatile int count;

        Pinger(int total, boolean fromIoThread) {
            this.samples = new long[total];
            this.fromIoThread = fromIoThread;
        }

        @Override
        public void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload) {
            if (type != FrameType.MESSAGE) {
                return;
            }
            long now = System.nanoTime();
            int i = count;
            samples[i] = now - sentAt;
            count = i + 1;
            if (fromIoThread) {
                if (i + 1 < samples.length) {
                    sentAt = System.nanoTime();
                    connection.send(ping());
                } else {
                    done.countDown();
                }
            } else {
                LockSupport.unpark(waiter);
            }
        }

        @Override
        public void onClosed(String reason, Throwable cause) {
        }
    }
}
