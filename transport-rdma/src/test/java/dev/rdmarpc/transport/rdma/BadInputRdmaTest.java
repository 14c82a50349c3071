package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static dev.rdmarpc.transport.rdma.RdmaTests.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.transport.rdma.verbs.Gid;
import dev.rdmarpc.transport.rdma.verbs.MemoryRegion;
import dev.rdmarpc.transport.rdma.verbs.PortAttributes;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A misbehaving peer: a client whose RDMA endpoint sends frames no correct peer sends (through the endpoint's normal
 * send path, so they arrive as real SENDs on the server's QP), and a raw TCP client whose HELLO offers impossible
 * queue pair parameters. Each case must close only that connection, with a logged reason, counted as a protocol
 * error, while the server keeps serving a second client whose connection is open all along; slabs, regions,
 * windows and queue pairs return to baseline (checked after every test by {@link RdmaEndToEndBase}).
 */
@Tag("rdma")
class BadInputRdmaTest extends RdmaEndToEndBase {

    @Test
    void anRtsLongerThanTheMaximumInboundSizeClosesOnlyThatConnection() throws Exception {
        int length = MAX_MESSAGE + (16 << 20); // beyond the largest message and frame the server accepts
        misbehave(ep -> sendRaw(ep, RendezvousFrames.RTS_FRAME, seg ->
                        RendezvousFrames.writeRts(seg, 0, 1, FrameType.MESSAGE, 0, length, 0x10000L, 0x1234, 77)),
                "RTS on stream 1 announces a " + length + "-byte MESSAGE payload");
    }

    @Test
    void anRtsOutsideWhatThePeerRegisteredFailsTheReadAndClosesOnlyThatConnection() throws Exception {
        misbehave(ep -> {
            // a real rkey of the rogue's own slab region, but an address range past that region's end
            SlabBuffer any = SlabPool.shared().allocate(64);
            MemoryRegion mr;
            try {
                mr = MemoryRegistry.region(any, ep.context.registry().device());
                assertNotNull(mr, "the rogue's slab is registered");
            } finally {
                any.release();
            }
            long outside = mr.address() + mr.length() + (1 << 20);
            sendRaw(ep, RendezvousFrames.RTS_FRAME, seg ->
                    RendezvousFrames.writeRts(seg, 0, 1, FrameType.MESSAGE, 0, 4096, outside, mr.rkey(), 78));
        }, "IBV_WC_REM_ACCESS_ERR");
    }

    @Test
    void aFinForAnUnknownStreamClosesOnlyThatConnection() throws Exception {
        misbehave(ep -> sendRaw(ep, RendezvousFrames.FIN_FRAME, seg -> RendezvousFrames.writeFin(seg, 0, 4243, 999)),
                "FIN on stream 4243 names rendezvous token 999");
    }

    @Test
    void aHelloWithImpossibleQueuePairParametersClosesOnlyThatConnection() throws Exception {
        startServer();
        RpcChannel good = channel();
        byte[] req = Bytes.pattern(4096, 1);
        assertEquals(-1, Bytes.mismatch(req, echo(good, req, 30_000)));
        assertRdma(good);
        RdmaDeviceContext c = RdmaTests.context();
        PortAttributes p = c.portAttributes();
        Map<String, RdmaCapability> cases = new LinkedHashMap<>();
        RdmaCapability ok = new RdmaCapability(p.linkLayer(), p.activeMtu(), 16, 0x1234, 0x42, p.lid(), 64, c.gid(),
                8192, 32);
        cases.put("QPN 0 is not a valid RC queue pair number", with(ok, 0, ok.mtu(), ok.credits(), ok.gid()));
        cases.put("path MTU code 9 is outside 1..5", with(ok, ok.qpn(), 9, ok.credits(), ok.gid()));
        cases.put("receive credits 0 are outside [2, 65535]", with(ok, ok.qpn(), ok.mtu(), 0, ok.gid()));
        if (p.isEthernet()) {
            cases.put("a RoCE peer must send a GID, got ::", with(ok, ok.qpn(), ok.mtu(), ok.credits(),
                    Gid.of(new byte[Gid.SIZE])));
        }
        int serverConnections = server.connectionCount();
        for (Map.Entry<String, RdmaCapability> e : cases.entrySet()) {
            RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
            try (RdmaTests.LogCapture logs = new RdmaTests.LogCapture();
                 Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", server.getPort()), (int) timeout(30_000));
                s.setSoTimeout((int) timeout(30_000));
                sendHello(s.getOutputStream(), e.getValue().encode());
                String answer = readUntilClosed(s.getInputStream());
                RdmaTests.await(10_000, () -> RdmaMetrics.snapshot().minus(before).protocolErrors() == 1,
                        () -> "the bad HELLO was counted as a protocol error: " + RdmaMetrics.snapshot().minus(before));
                RdmaTests.await(10_000, () -> logs.contains(e.getKey()),
                        () -> "a logged reason naming '" + e.getKey() + "': " + logs.messages());
                log("HELLO with " + e.getKey() + ": " + answer + "; logged "
                        + logs.messages().stream().filter(m -> m.contains(e.getKey())).findFirst().orElse("?"));
            }
            RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
            assertEquals(0, d.upgrades(), "nothing was upgraded: " + d);
            RdmaTests.await(10_000, () -> server.connectionCount() == serverConnections,
                    () -> "the rogue's connection is gone, the good one stays: " + server.connectionCount());
            assertEquals(-1, Bytes.mismatch(req, echo(good, req, 30_000)), "the other connection carries on");
            assertRdma(good);
        }
        RpcChannel fresh = channel();
        assertEquals(-1, Bytes.mismatch(req, echo(fresh, req, 30_000)), "a new connection is served");
        assertRdma(fresh);
        RdmaTests.await(10_000, () -> c.queuePairs() == 4, () -> "only the good connections' queue pairs are alive: "
                + c.queuePairs());
    }

    // ------------------------------------------------------------------ helpers

    interface Rogue {
        void act(RdmaEndpoint endpoint) throws Exception;
    }

    /**
     * Connects a good client and a rogue client over RDMA, lets the rogue act on its own endpoint, then checks that the
     * server closed the rogue's connection for a protocol error with {@code reason} in its log, and kept the good one.
     */
    private void misbehave(Rogue rogue, String reason) throws Exception {
        startServer();
        RpcChannel good = channel();
        byte[] req = Bytes.pattern(200_000, 3); // rendezvous both ways
        assertEquals(-1, Bytes.mismatch(req, echo(good, req, 30_000)));
        assertRdma(good);
        Set<RdmaEndpoint> known = new HashSet<>(RdmaTests.context().endpoints());
        RpcChannel bad = channel();
        assertEquals(-1, Bytes.mismatch(req, echo(bad, req, 30_000)));
        assertRdma(bad);
        RdmaEndpoint rogueEndpoint = Endpoints.newClientEnd(RdmaTests.context().endpoints(), known, server.getPort());
        assertEquals(2, server.connectionCount());
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        try (RdmaTests.LogCapture logs = new RdmaTests.LogCapture()) {
            rogue.act(rogueEndpoint);
            RdmaTests.await(20_000, () -> server.connectionCount() == 1,
                    () -> "the server closed the rogue's connection: " + server.connectionCount() + " connections");
            RdmaTests.await(10_000, () -> logs.contains("protocol error", reason),
                    () -> "a protocol error naming '" + reason + "' was logged: " + logs.messages());
            RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
            log("rogue closed: " + logs.messages().stream().filter(m -> m.contains(reason)).findFirst().orElse("?")
                    + "; " + d);
            assertEquals(1, d.protocolErrors(), "one protocol error, on the server's end: " + d);
        }
        assertEquals(-1, Bytes.mismatch(req, echo(good, req, 30_000)), "the good connection carries on");
        assertRdma(good);
        assertEquals(1, server.connectionCount());
        RdmaTests.await(20_000, () -> RdmaMetrics.snapshot().connections() == 2,
                () -> "both ends of the rogue's RDMA connection are torn down: " + RdmaMetrics.snapshot().connections());
    }

    /** Sends {@code size} bytes of frames written by {@code writer} on the endpoint, as core would send frames. */
    private static void sendRaw(RdmaEndpoint ep, int size, Consumer<java.lang.foreign.MemorySegment> writer) {
        SlabBuffer b = SlabPool.shared().allocate(size);
        writer.accept(b.segment());
        b.setLength(size);
        ep.send(b, null, true);
    }

    private static RdmaCapability with(RdmaCapability c, int qpn, int mtu, int credits, Gid gid) {
        return new RdmaCapability(c.linkLayer(), mtu, c.responderDepth(), qpn, c.psn(), c.lid(), c.maxInline(), gid,
                c.receiveBufferSize(), credits);
    }

    private static void sendHello(OutputStream out, byte[] capability) throws IOException {
        Hello hello = new Hello(Hello.VERSION, 1 << 20, FrameHeader.DEFAULT_MAX_PAYLOAD, 4 << 20,
                Map.of(Hello.CAP_RDMA, capability));
        SlabBuffer b = Frames.hello(SlabPool.shared(), hello);
        try {
            byte[] bytes = new byte[b.length()];
            java.lang.foreign.MemorySegment.ofArray(bytes).copyFrom(b.segment().asSlice(0, b.length()));
            out.write(bytes);
            out.flush();
        } finally {
            b.release();
        }
    }

    /** Reads what the server sends until it closes the connection; describes it. */
    private static String readUntilClosed(InputStream in) throws IOException {
        byte[] buf = new byte[4096];
        long total = 0;
        try {
            int n;
            while ((n = in.read(buf)) >= 0) {
                total += n;
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server kept the connection open after a bad HELLO (" + total + " bytes read)");
        } catch (IOException e) {
            return "connection reset after " + total + " bytes";
        }
        return "server closed the connection after sending " + total + " bytes";
    }
}
