package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.transport.rdma.verbs.Gid;
import dev.rdmarpc.transport.rdma.verbs.PortAttributes;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The CAP_RDMA block: round trip, exact layout, and every impossible field refused with a clear reason. */
class RdmaCapabilityTest {
    private static final int ETH = PortAttributes.LINK_LAYER_ETHERNET;
    private static final Gid GID = Gid.of(new byte[]{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 192,
            (byte) 168, 77, 1});

    private static RdmaCapability valid() {
        return new RdmaCapability(ETH, PortAttributes.MTU_1024, 16, 0x1234, 0xabcdef, 0, 256, GID, 8192, 64);
    }

    @Test
    void roundTripsAndHasTheDocumentedLayout() {
        byte[] bytes = valid().encode();
        assertEquals(RdmaCapability.SIZE, bytes.length);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1, b.get(0));
        assertEquals(ETH, b.get(1));
        assertEquals(PortAttributes.MTU_1024, b.get(2));
        assertEquals(16, b.get(3));
        assertEquals(0x1234, b.getInt(4));
        assertEquals(0xabcdef, b.getInt(8));
        assertEquals(256, b.getShort(14));
        assertEquals((byte) 192, b.get(16 + 12));
        assertEquals(8192, b.getInt(32));
        assertEquals(64, b.getInt(36));
        assertEquals(valid(), RdmaCapability.decode(bytes, ETH));
    }

    @Test
    void refusesImpossibleParameters() {
        expectBad(put(4, 0), "QPN 0 is not a valid");
        expectBad(put(4, 0x1000000), "QPN 16777216");
        expectBad(put(8, 0x1000000), "PSN");
        expectBad(putByte(2, 9), "path MTU code 9");
        expectBad(putByte(3, 0), "responder depth 0");
        expectBad(putByte(1, 7), "link layer 7");
        expectBad(putByte(0, 2), "layout version 2");
        expectBad(put(32, 100), "receive buffer size 100");
        expectBad(put(36, 1), "receive credits 1");
        expectBad(put(40, 5), "reserved bytes");
        byte[] zeroGid = valid().encode();
        java.util.Arrays.fill(zeroGid, 16, 32, (byte) 0);
        expectBad(zeroGid, "must send a GID");
        expectBad(new byte[12], "it has 12 bytes");
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> RdmaCapability.decode(valid().encode(), PortAttributes.LINK_LAYER_INFINIBAND));
        assertTrue(e.getMessage().contains("Ethernet (RoCE), this side's is InfiniBand"), e.getMessage());
    }

    private static byte[] put(int offset, int value) {
        byte[] b = valid().encode();
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(offset, value);
        return b;
    }

    private static byte[] putByte(int offset, int value) {
        byte[] b = valid().encode();
        b[offset] = (byte) value;
        return b;
    }

    private static void expectBad(byte[] bytes, String part) {
        ProtocolException e = assertThrows(ProtocolException.class, () -> RdmaCapability.decode(bytes, ETH));
        assertTrue(e.getMessage().startsWith("impossible RDMA parameters in the peer's HELLO (CAP_RDMA): "), e.getMessage());
        assertTrue(e.getMessage().contains(part), () -> "'" + e.getMessage() + "' should name " + part);
    }
}
