package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.TransportMode;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * A client run in its own JVM by the RDMA tests (see {@link ChildJvm}).
 * <ul>
 *   <li>{@code firehose <port>}: starts a FIREHOSE call of 1 MiB messages over RDMA, prints RECEIVING after the
 *       first one and then waits to be killed</li>
 *   <li>{@code echo <port>}: 64 B, 4 KiB and 1 MiB echoes over RDMA, checked, then prints the transport's counters
 *       and OK (run with {@code -Drdmarpc.rdma.rendezvous=region} to exercise per-rendezvous regions)</li>
 * </ul>
 */
public final class ChildClientMain {
    private ChildClientMain() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int port = Integer.parseInt(args[1]);
        // the first connection opens this JVM's device, which takes tens of seconds under emulation: scaled timeout
        try (RpcChannel ch = RpcChannel.forAddress("127.0.0.1", port).transportMode(TransportMode.RDMA)
                .connectTimeout(java.time.Duration.ofMillis(RdmaTests.timeout(20_000)))
                .maxInboundMessageSize(64 << 20).build()) {
            switch (mode) {
                case "firehose" -> firehose(ch);
                case "echo" -> echo(ch);
                default -> throw new IllegalArgumentException(mode);
            }
        }
        System.exit(0);
    }

    private static void firehose(RpcChannel ch) throws InterruptedException {
        ClientCall<byte[], byte[]> call = ch.newCall(EchoService.FIREHOSE, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            boolean first = true;

            @Override
            public void onMessage(byte[] message) {
                if (first) {
                    first = false;
                    System.out.println("RECEIVING " + message.length + " over " + ch.currentTransport());
                    System.out.flush();
                }
                call.request(1);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                System.out.println("CLOSED " + status);
            }
        }, new Metadata());
        call.request(1);
        call.sendMessage(Bytes.ofInts(1 << 20));
        call.halfClose();
        Thread.sleep(Long.MAX_VALUE);
    }

    private static void echo(RpcChannel ch) {
        for (int size : new int[]{64, 4096, 1 << 20}) {
            byte[] req = Bytes.pattern(size, size);
            byte[] resp = ClientCalls.blockingUnaryCall(ch, EchoService.ECHO,
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.MINUTES), req);
            if (!Arrays.equals(req, resp)) {
                System.out.println("MISMATCH at " + size);
                System.exit(3);
            }
        }
        System.out.println("TRANSPORT " + ch.currentTransport());
        System.out.println("COUNTERS " + RdmaMetrics.snapshot());
        System.out.println("OK");
    }
}
