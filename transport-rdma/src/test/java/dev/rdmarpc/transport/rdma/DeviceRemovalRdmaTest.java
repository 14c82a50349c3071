package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static dev.rdmarpc.transport.rdma.RdmaTests.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RdmaDeviceChoice;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.TransportMode;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The guest's second device (rxe1 on dummy1, 192.168.78.1) removed with {@code rdma link delete} while a call is in
 * flight on it, then added back with {@code rdma link add}: the call fails with UNAVAILABLE, the device's context is
 * torn down (Soft-RoCE sends no {@code IBV_EVENT_DEVICE_FATAL}; the kernel waits for the process to close the device,
 * so the delete command only returns once the transport has let go), new connections that ask for the device stay on
 * TCP, and once it is back they use RDMA on it again. Slabs, regions and queue pairs end at baseline.
 */
@Tag("rdma")
class DeviceRemovalRdmaTest extends RdmaEndToEndBase {
    private static final String ADDRESS = "192.168.78.1";
    private static final String NETDEV = "dummy1";

    /**
     * Opens the second device's context before the baseline is taken: its SRQ holds receive buffers for good, and the
     * context opened anew after the device is added back holds as many.
     */
    @BeforeAll
    static void openTheSecondDevice() throws IOException {
        var match = GidTable.find(GidTable.SYSFS, InetAddress.getByName(ADDRESS), null, 0);
        if (match.isPresent()) {
            try {
                DeviceContexts.context(match.get().device(), 0);
            } catch (DeviceSelector.Unavailable e) {
                throw new AssertionError("the second RDMA device cannot be opened: " + e.getMessage(), e);
            }
        }
    }

    @Test
    void aRemovedDeviceClosesItsConnectionsAndIsUsedAgainOnceAddedBack() throws Exception {
        var match = GidTable.find(GidTable.SYSFS, InetAddress.getByName(ADDRESS), null, 0);
        assumeTrue(match.isPresent(), "no RDMA device has " + ADDRESS + " (the guest's rxe1)");
        assumeTrue(run("rdma", "link", "show").exitCode == 0, "iproute2's rdma tool is needed");
        String device = match.get().device();
        RdmaDeviceChoice onDevice = RdmaDeviceChoice.named(device);
        startServer();
        RpcChannel ch = channelTo(onDevice);
        byte[] req = Bytes.pattern(200_000, 5); // a rendezvous: a window or region on the device
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)));
        assertRdma(ch);
        RdmaDeviceContext context = DeviceContexts.context(device, 0);
        CompletableFuture<byte[]> hanging = ClientCalls.futureUnaryCall(ch.newCall(EchoService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(timeout(120_000), TimeUnit.MILLISECONDS)), new byte[1]);
        RdmaTests.await(10_000, () -> service.hangCalls.get() == 1, () -> "the HANG call reached its handler");
        long faultsBefore = RdmaMetrics.DEVICE_FAULTS.sum();

        long t0 = System.nanoTime();
        Process delete = new ProcessBuilder("rdma", "link", "delete", device).redirectErrorStream(true).start();
        try {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> hanging.get(timeout(60_000), TimeUnit.MILLISECONDS));
            Status status = ((StatusException) e.getCause()).getStatus();
            log(device + " removed: the call in flight ended after " + (System.nanoTime() - t0) / 1_000_000 + " ms with "
                    + status);
            assertEquals(Status.Code.UNAVAILABLE, status.getCode(), "failed by the removal, not by its deadline");
            RdmaTests.await(60_000, () -> !delete.isAlive() && context.isClosed(),
                    () -> "the context of " + device + " closed and rdma link delete returned: closed " + context.isClosed()
                            + ", queue pairs " + context.queuePairs() + ", delete running " + delete.isAlive());
            log("rdma link delete " + device + " returned after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            assertEquals(0, delete.exitValue(), () -> "rdma link delete " + device + ": " + output(delete));
            assertTrue(RdmaMetrics.DEVICE_FAULTS.sum() > faultsBefore, "counted as a device fault");

            RpcChannel whileRemoved = channelTo(onDevice);
            assertEquals(-1, Bytes.mismatch(req, echo(whileRemoved, req, 30_000)));
            assertEquals("tcp", whileRemoved.currentTransport(), "a new connection while " + device + " is gone");
        } finally {
            delete.waitFor(timeout(60_000), TimeUnit.MILLISECONDS);
            if (run("rdma", "link", "show", device).exitCode != 0) {
                Result add = run("rdma", "link", "add", device, "type", "rxe", "netdev", NETDEV);
                assertEquals(0, add.exitCode, "rdma link add " + device + ": " + add.output);
            }
        }

        // the device is back: a failed open is retried after a few seconds, so new connections soon use it again
        AtomicReference<String> last = new AtomicReference<>();
        RdmaTests.await(60_000, () -> {
            RpcChannel again = channelTo(onDevice);
            byte[] answer = echo(again, req, 30_000);
            last.set(again.currentTransport() + ", " + (Bytes.mismatch(req, answer) == -1 ? "echoed" : "WRONG ECHO"));
            if ("rdma".equals(again.currentTransport())) {
                return true;
            }
            channels.remove(again);
            again.shutdownNow(); // one connection at a time: no pile of TCP channels while the open is retried
            return false;
        }, () -> "a new connection uses " + device + " again after it was added back: the last one was on " + last.get());
        assertTrue(last.get().endsWith("echoed"), last.get());
        log(device + " added back: new connections use it again");
    }

    private RpcChannel channelTo(RdmaDeviceChoice device) {
        RpcChannel c = RpcChannel.forAddress(ADDRESS, server.getPort()).maxInboundMessageSize(MAX_MESSAGE)
                .transportMode(TransportMode.AUTO).rdmaDevice(device).build();
        channels.add(c);
        return c;
    }

    private record Result(int exitCode, String output) {
    }

    private static Result run(String... command) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return new Result(p.waitFor(), out);
        } catch (IOException e) {
            return new Result(-1, e.toString());
        }
    }

    private static String output(Process p) {
        try {
            return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return e.toString();
        }
    }
}
