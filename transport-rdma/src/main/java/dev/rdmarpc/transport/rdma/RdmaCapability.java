package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.transport.rdma.verbs.Gid;
import dev.rdmarpc.transport.rdma.verbs.PortAttributes;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The HELLO capability {@code CAP_RDMA} (id 1): what a peer needs to connect an RC queue pair to this side and to send
 * to it. 48 bytes, little-endian; layout in docs/PROTOCOL.md ("RDMA data path").
 *
 * @param linkLayer       {@link PortAttributes#LINK_LAYER_INFINIBAND} or {@link PortAttributes#LINK_LAYER_ETHERNET}
 * @param mtu             the port's active MTU ({@code enum ibv_mtu}, 1..5)
 * @param responderDepth  RDMA READs the peer may have outstanding against this side ({@code max_dest_rd_atomic})
 * @param qpn             this side's queue pair number
 * @param psn             this side's first send PSN
 * @param lid             the port's LID (InfiniBand; 0 on RoCE)
 * @param maxInline       inline SEND size this side got (informative)
 * @param gid             the GID this side sends from
 * @param receiveBufferSize the largest SEND this side accepts (bytes)
 * @param credits         SENDs the peer may have outstanding before credits come back
 */
record RdmaCapability(int linkLayer, int mtu, int responderDepth, int qpn, int psn, int lid, int maxInline, Gid gid,
                      int receiveBufferSize, int credits) {
    static final int VERSION = 1;
    static final int SIZE = 48;
    static final int MIN_RECEIVE_BUFFER = 1024;
    static final int MAX_RECEIVE_BUFFER = 16 << 20;

    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) VERSION).put((byte) linkLayer).put((byte) mtu).put((byte) responderDepth);
        b.putInt(qpn).putInt(psn).putShort((short) lid).putShort((short) maxInline);
        b.put(gid.raw());
        b.putInt(receiveBufferSize).putInt(credits).putInt(0).putInt(0);
        return b.array();
    }

    /**
     * Parses and checks a peer's capability against this side's port.
     *
     * @throws ProtocolException naming the first impossible field
     */
    static RdmaCapability decode(byte[] bytes, int localLinkLayer) {
        if (bytes.length != SIZE) {
            throw bad("it has " + bytes.length + " bytes, version " + VERSION + " has " + SIZE);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int version = b.get() & 0xff;
        if (version != VERSION) {
            throw bad("layout version " + version + " (this side speaks " + VERSION + ")");
        }
        int linkLayer = b.get() & 0xff;
        int mtu = b.get() & 0xff;
        int responderDepth = b.get() & 0xff;
        int qpn = b.getInt();
        int psn = b.getInt();
        int lid = b.getShort() & 0xffff;
        int maxInline = b.getShort() & 0xffff;
        byte[] gidBytes = new byte[Gid.SIZE];
        b.get(gidBytes);
        Gid gid = Gid.of(gidBytes);
        int receiveBufferSize = b.getInt();
        int credits = b.getInt();
        int reserved1 = b.getInt();
        int reserved2 = b.getInt();
        if (linkLayer != PortAttributes.LINK_LAYER_ETHERNET && linkLayer != PortAttributes.LINK_LAYER_INFINIBAND) {
            throw bad("link layer " + linkLayer + " is neither InfiniBand (1) nor Ethernet (2)");
        }
        if (linkLayer != localLinkLayer) {
            throw bad("the peer's port is " + layerName(linkLayer) + ", this side's is " + layerName(localLinkLayer));
        }
        if (mtu < PortAttributes.MTU_256 || mtu > PortAttributes.MTU_4096) {
            throw bad("path MTU code " + mtu + " is outside 1..5 (256..4096 bytes)");
        }
        if (responderDepth < 1) {
            throw bad("responder depth 0: the peer accepts no RDMA READ, so rendezvous is impossible");
        }
        if (qpn < 2 || qpn > 0xffffff) {
            throw bad("QPN " + Integer.toUnsignedString(qpn) + " is not a valid RC queue pair number (2..0xffffff)");
        }
        if (psn < 0 || psn > 0xffffff) {
            throw bad("PSN 0x" + Integer.toHexString(psn) + " does not fit 24 bits");
        }
        if (linkLayer == PortAttributes.LINK_LAYER_ETHERNET && gid.isZero()) {
            throw bad("a RoCE peer must send a GID, got ::");
        }
        if (linkLayer == PortAttributes.LINK_LAYER_INFINIBAND && lid == 0 && gid.isZero()) {
            throw bad("an InfiniBand peer must send a LID or a GID");
        }
        if (receiveBufferSize < MIN_RECEIVE_BUFFER || receiveBufferSize > MAX_RECEIVE_BUFFER) {
            throw bad("receive buffer size " + Integer.toUnsignedString(receiveBufferSize) + " is outside ["
                    + MIN_RECEIVE_BUFFER + ", " + MAX_RECEIVE_BUFFER + "]");
        }
        if (credits < 2 || credits > 65535) {
            throw bad("receive credits " + Integer.toUnsignedString(credits) + " are outside [2, 65535]");
        }
        if (reserved1 != 0 || reserved2 != 0) {
            throw bad("reserved bytes are not zero");
        }
        return new RdmaCapability(linkLayer, mtu, responderDepth, qpn, psn, lid, maxInline, gid, receiveBufferSize,
                credits);
    }

    private static String layerName(int linkLayer) {
        return linkLayer == PortAttributes.LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand";
    }

    private static ProtocolException bad(String what) {
        return new ProtocolException("impossible RDMA parameters in the peer's HELLO (CAP_RDMA): " + what);
    }
}
