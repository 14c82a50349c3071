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
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Connections on two RDMA devices in one process (the guest's rxe0 on dummy0, 192.168.77.1, and rxe1 on dummy1,
 * 192.168.78.1): each connection's queue pair is on the device of its local address; a port that goes down closes its
 * connections with UNAVAILABLE and sends new ones to TCP until it is active again; a peer whose queue-pair transition
 * failed is remembered and its next connections stay on TCP. Skipped where the second device is missing.
 */
@Tag("rdma")
class DevicePerConnectionRdmaTest extends RdmaEndToEndBase {
    private static final String FIRST_ADDRESS = "192.168.77.1";
    private static final String SECOND_ADDRESS = "192.168.78.1";
    private static final String SECOND_NETDEV = "dummy1";

    /** Opens the second device's context before the baseline is taken: its SRQ holds receive buffers for good. */
    @BeforeAll
    static void openTheSecondDevice() throws IOException {
        try {
            DeviceContexts.context(deviceOf(SECOND_ADDRESS), 0);
        } catch (DeviceSelector.Unavailable e) {
            throw new AssertionError("the second RDMA device cannot be opened: " + e.getMessage(), e);
        }
    }

    @AfterEach
    void forgetFailedPeersAndBringTheSecondPortUp() throws Exception {
        PeerFallbacks.PROCESS.clear();
        if (ipAvailable()) {
            ip("link", "set", SECOND_NETDEV, "up");
        }
    }

    @Test
    void eachConnectionUsesTheDeviceOfItsLocalAddress() throws Exception {
        String first = deviceOf(FIRST_ADDRESS);
        String second = deviceOf(SECOND_ADDRESS);
        startServer();
        RpcChannel a = channelTo(FIRST_ADDRESS, b -> b.transportMode(TransportMode.RDMA));
        RpcChannel b = channelTo(SECOND_ADDRESS, c -> c.transportMode(TransportMode.RDMA));
        byte[] small = Bytes.pattern(512, 1);
        byte[] large = Bytes.pattern(300_000, 2);
        for (RpcChannel ch : List.of(a, b)) {
            assertEquals(-1, Bytes.mismatch(small, echo(ch, small, 30_000)));
            assertEquals(-1, Bytes.mismatch(large, echo(ch, large, 60_000)));
            assertRdma(ch);
        }
        assertEquals(first, deviceOfEndpointsAt(FIRST_ADDRESS), "queue pairs of connections on " + FIRST_ADDRESS);
        assertEquals(second, deviceOfEndpointsAt(SECOND_ADDRESS), "queue pairs of connections on " + SECOND_ADDRESS);
        log("connections on " + FIRST_ADDRESS + " use " + first + ", on " + SECOND_ADDRESS + " use " + second);
    }

    @Test
    void aPortThatGoesDownFailsItsConnectionsAndNewOnesStayOnTcpUntilItIsActive() throws Exception {
        assumeTrue(ipAvailable(), "the ip tool is needed to take " + SECOND_NETDEV + " down");
        String second = deviceOf(SECOND_ADDRESS);
        startServer();
        RpcChannel onSecond = channelTo(SECOND_ADDRESS, b -> b);
        RpcChannel onFirst = channelTo(FIRST_ADDRESS, b -> b);
        byte[] req = Bytes.pattern(4096, 3);
        assertEquals(-1, Bytes.mismatch(req, echo(onSecond, req, 30_000)));
        assertEquals(-1, Bytes.mismatch(req, echo(onFirst, req, 30_000)));
        assertRdma(onSecond);
        assertRdma(onFirst);
        RdmaDeviceContext secondContext = DeviceContexts.context(second, 0);
        CompletableFuture<byte[]> hanging = ClientCalls.futureUnaryCall(onSecond.newCall(EchoService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(timeout(120_000), TimeUnit.MILLISECONDS)), new byte[1]);
        RdmaTests.await(20_000, () -> service.hangCalls.get() == 1, () -> "the HANG call reached its handler");
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();

        ip("link", "set", SECOND_NETDEV, "down");
        RdmaTests.await(30_000, () -> secondContext.unusableReason() != null,
                () -> "IBV_EVENT_PORT_ERR on " + second + " after " + SECOND_NETDEV + " went down");
        ExecutionException e = assertThrows(ExecutionException.class, () -> hanging.get(timeout(60_000), TimeUnit.MILLISECONDS));
        Status status = ((StatusException) e.getCause()).getStatus();
        log("call in flight when " + second + "'s port went down: " + status);
        assertEquals(Status.Code.UNAVAILABLE, status.getCode());

        RpcChannel whileDown = channelTo(SECOND_ADDRESS, b -> b);
        assertEquals(-1, Bytes.mismatch(req, echo(whileDown, req, 30_000)));
        assertEquals("tcp", whileDown.currentTransport(), "a new connection while the port is down");
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        assertTrue(d.fallbackReasons().getOrDefault(Fallbacks.PORT_DOWN, 0L) >= 1, "counted as port-down: " + d.fallbackReasons());
        assertEquals(-1, Bytes.mismatch(req, echo(onFirst, req, 30_000)), "the other device's connection carries on");
        assertRdma(onFirst);

        ip("link", "set", SECOND_NETDEV, "up");
        RdmaTests.await(30_000, () -> secondContext.unusableReason() == null,
                () -> "IBV_EVENT_PORT_ACTIVE on " + second + " after " + SECOND_NETDEV + " came up");
        RpcChannel afterUp = channelTo(SECOND_ADDRESS, b -> b.transportMode(TransportMode.RDMA));
        assertEquals(-1, Bytes.mismatch(req, echo(afterUp, req, 30_000)));
        assertRdma(afterUp);
        assertEquals(second, deviceOfEndpointsAt(SECOND_ADDRESS), "the new connection's queue pair");
    }

    @Test
    void aPeerWhoseQueuePairTransitionFailedStaysOnTcp() throws Exception {
        deviceOf(FIRST_ADDRESS);
        startServer();
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        // GID 0 is the port's IPv6 link-local RoCE v2 entry: the route from it to the server's IPv4-mapped GID (or back)
        // cannot be resolved, so one side's RTR transition fails
        RpcChannel misconfigured = channelTo(FIRST_ADDRESS, b -> b.rdmaDevice(new RdmaDeviceChoice(null, 0, 0)));
        byte[] req = Bytes.pattern(4096, 4);
        assertEquals(-1, Bytes.mismatch(req, echo(misconfigured, req, 60_000)));
        assertEquals("tcp", misconfigured.currentTransport(), "the misconfigured channel's connection");
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        log("first connection: fallbacks " + d.fallbackReasons());
        assertTrue(d.fallbackReasons().getOrDefault(Fallbacks.QP_FAILED, 0L) >= 1, "a failed transition: " + d.fallbackReasons());
        InetAddress peer = InetAddress.getByName(FIRST_ADDRESS);
        assertTrue(PeerFallbacks.PROCESS.isRemembered(peer), "the peer is remembered");

        RdmaMetrics.Snapshot beforeSecond = RdmaMetrics.snapshot();
        RpcChannel next = channelTo(FIRST_ADDRESS, b -> b);
        assertEquals(-1, Bytes.mismatch(req, echo(next, req, 30_000)));
        assertEquals("tcp", next.currentTransport(), "a new connection with the remembered peer");
        RdmaMetrics.Snapshot d2 = RdmaMetrics.snapshot().minus(beforeSecond);
        assertEquals(0, d2.fallbackReasons().getOrDefault(Fallbacks.QP_FAILED, 0L), "no new transition was tried: " + d2);
        assertTrue(d2.fallbackReasons().getOrDefault(Fallbacks.PEER_REMEMBERED, 0L) >= 1, "counted: " + d2.fallbackReasons());

        RpcChannel other = channel(); // 127.0.0.1: another peer, which the server still serves over RDMA
        assertEquals(-1, Bytes.mismatch(req, echo(other, req, 30_000)));
        assertRdma(other);
    }

    private RpcChannel channelTo(String host, UnaryOperator<RpcChannel.Builder> customize) {
        RpcChannel c = customize.apply(RpcChannel.forAddress(host, server.getPort()).maxInboundMessageSize(MAX_MESSAGE))
                .build();
        channels.add(c);
        return c;
    }

    /** The device whose GID table holds {@code address}; skips the test when there is none (no second device). */
    private static String deviceOf(String address) throws IOException {
        var match = GidTable.find(GidTable.SYSFS, InetAddress.getByName(address), null, 0);
        assumeTrue(match.isPresent(), "no RDMA device has " + address + " (the guest's rxe0/rxe1)");
        return match.get().device();
    }

    /** The device of every open RDMA endpoint whose local address is {@code address}, which must be one device. */
    private static String deviceOfEndpointsAt(String address) {
        String device = null;
        int found = 0;
        for (RdmaDeviceContext c : DeviceContexts.all()) {
            for (RdmaEndpoint ep : c.endpoints()) {
                if (ep.localAddress() instanceof InetSocketAddress a && a.getAddress().getHostAddress().equals(address)) {
                    assertTrue(device == null || device.equals(c.deviceName()),
                            "connections on " + address + " are on " + device + " and " + c.deviceName());
                    device = c.deviceName();
                    found++;
                }
            }
        }
        assertTrue(found >= 2, "both ends of a connection on " + address + " are RDMA endpoints: " + found);
        return device;
    }

    private static boolean ipAvailable() {
        try {
            return new ProcessBuilder("ip", "-V").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void ip(String... args) throws IOException, InterruptedException {
        String[] command = new String[args.length + 1];
        command[0] = "ip";
        System.arraycopy(args, 0, command, 1, args.length);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), String.join(" ", command) + ": " + output);
    }
}
