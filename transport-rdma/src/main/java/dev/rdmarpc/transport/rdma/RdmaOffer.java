package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.ConnectionUpgrader;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;
import dev.rdmarpc.transport.rdma.verbs.Gid;
import dev.rdmarpc.transport.rdma.verbs.PortAttributes;
import dev.rdmarpc.transport.rdma.verbs.QueuePair;
import dev.rdmarpc.transport.rdma.verbs.RtrParameters;
import dev.rdmarpc.transport.rdma.verbs.RtsParameters;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;

import java.net.InetAddress;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One connection's pending upgrade: a queue pair in INIT and this side's {@code CAP_RDMA}. {@link #complete} checks
 * the peer's parameters (impossible ones are a protocol error that closes the connection), moves the QP to RTR and
 * RTS and returns the {@link RdmaEndpoint}; {@link #abandon} destroys the QP when the upgrade does not happen. A
 * transition the kernel refuses makes {@link PeerFallbacks} remember the peer, so its next connections stay on TCP.
 */
final class RdmaOffer implements ConnectionUpgrader.Offer {
    private static final int PREPARED = 0;
    private static final int COMPLETED = 1;
    private static final int FAILED = 2;
    private static final int ABANDONED = 3;

    private final RdmaDeviceContext context;
    private final int gidIndex;
    private final Gid gid;
    private final InetAddress peerHost;
    private final QueuePair qp;
    private final FrameConnection base;
    private final SlabPool pool;
    private final int psn = ThreadLocalRandom.current().nextInt(1 << 24);
    private int state = PREPARED;

    RdmaOffer(DeviceContexts.ConnectionPath path, QueuePair qp, FrameConnection base, SlabPool pool, InetAddress peer) {
        this.context = path.context();
        this.gidIndex = path.gidIndex();
        this.gid = path.gid();
        this.peerHost = peer;
        this.qp = qp;
        this.base = base;
        this.pool = pool;
    }

    @Override
    public byte[] capability() {
        PortAttributes p = context.portAttributes();
        return new RdmaCapability(p.linkLayer(), p.activeMtu(), context.responderDepth(), qp.qpNum(), psn, p.lid(),
                qp.caps().maxInlineData(), gid, context.receiveBufferSize(), context.credits()).encode();
    }

    @Override
    public synchronized FrameConnection complete(byte[] peerCapability, FrameHandler handler) throws Exception {
        if (state != PREPARED) {
            throw new IllegalStateException("upgrade offer already " + (state == COMPLETED ? "completed" : "abandoned"));
        }
        RdmaCapability peer;
        try {
            peer = RdmaCapability.decode(peerCapability, context.portAttributes().linkLayer());
        } catch (ProtocolException e) {
            state = FAILED;
            release();
            RdmaMetrics.PROTOCOL_ERRORS.increment();
            Fallbacks.LOG.log(System.Logger.Level.WARNING, "closing connection with {0}: {1}", base.remoteAddress(),
                    e.getMessage());
            base.close(e.getMessage()); // a malformed HELLO closes the connection, as any protocol error does
            throw e;
        }
        RdmaEndpoint ep = new RdmaEndpoint(context.nextEndpointId(), context, qp, base, handler, pool, peer);
        context.register(ep);
        try {
            PortAttributes p = context.portAttributes();
            boolean roce = p.isEthernet();
            qp.toRtr(new RtrParameters(peer.qpn(), peer.psn(), roce || peer.lid() == 0 ? peer.gid() : null, peer.lid(),
                    gidIndex, context.port(), Math.min(p.activeMtu(), peer.mtu()), context.responderDepth(),
                    context.config().minRnrTimer(), 64, 0, 0));
            qp.toRts(new RtsParameters(psn, context.config().ackTimeout(), context.config().retryCount(), 7,
                    Math.min(context.initiatorDepth(), peer.responderDepth())));
        } catch (VerbsException e) {
            state = FAILED;
            context.unregister(ep);
            context.connectionClosed();
            ep.discardUnconnected();
            try {
                qp.close();
            } finally {
                context.unreserve(qp);
            }
            Fallbacks.record(Fallbacks.QP_FAILED, "connecting the queue pair failed: " + e.getMessage());
            if (PeerFallbacks.PROCESS.remember(peerHost)) {
                Fallbacks.LOG.log(System.Logger.Level.INFO, "RDMA with {0} failed on {1} port {2} ({3}): its new "
                        + "connections stay on TCP for {4} s", peerHost.getHostAddress(), context.deviceName(), context.port(),
                        e.getMessage(), PeerFallbacks.PROCESS.expirySeconds());
            }
            throw e;
        }
        state = COMPLETED;
        ep.connected = true;
        RdmaMetrics.UPGRADES.increment();
        context.counters().upgrades.increment();
        return ep;
    }

    @Override
    public synchronized void abandon() {
        if (state != PREPARED) {
            return; // completed (the endpoint owns the QP) or already cleaned up
        }
        state = ABANDONED;
        release();
        if (base.isOpen()) {
            Fallbacks.record(Fallbacks.PEER_WITHOUT_RDMA, "the peer's HELLO offered no RDMA (or the upgrade was declined)");
        }
    }

    private void release() {
        try {
            qp.close();
        } finally {
            context.unreserve(qp);
        }
    }
}
