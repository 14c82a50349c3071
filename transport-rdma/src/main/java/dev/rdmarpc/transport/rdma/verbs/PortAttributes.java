package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.IbvPortAttr.off;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemorySegment;

/** A snapshot of {@code struct ibv_port_attr} ({@code ibv_query_port}). */
public record PortAttributes(
        int state,
        int maxMtu,
        int activeMtu,
        int gidTableLength,
        int portCapFlags,
        long maxMessageSize,
        int lid,
        int physState,
        int linkLayer) {

    /** {@code IBV_PORT_DOWN}. */
    public static final int STATE_DOWN = 1;
    /** {@code IBV_PORT_INIT}. */
    public static final int STATE_INIT = 2;
    /** {@code IBV_PORT_ARMED}. */
    public static final int STATE_ARMED = 3;
    /** {@code IBV_PORT_ACTIVE}. */
    public static final int STATE_ACTIVE = 4;
    /** {@code IBV_LINK_LAYER_INFINIBAND}. */
    public static final int LINK_LAYER_INFINIBAND = 1;
    /** {@code IBV_LINK_LAYER_ETHERNET} (RoCE). */
    public static final int LINK_LAYER_ETHERNET = 2;

    /** {@code IBV_MTU_256}. */
    public static final int MTU_256 = 1;
    /** {@code IBV_MTU_512}. */
    public static final int MTU_512 = 2;
    /** {@code IBV_MTU_1024}. */
    public static final int MTU_1024 = 3;
    /** {@code IBV_MTU_2048}. */
    public static final int MTU_2048 = 4;
    /** {@code IBV_MTU_4096}. */
    public static final int MTU_4096 = 5;

    static PortAttributes read(MemorySegment a) {
        return new PortAttributes(
                a.get(JAVA_INT, off("state")),
                a.get(JAVA_INT, off("max_mtu")),
                a.get(JAVA_INT, off("active_mtu")),
                a.get(JAVA_INT, off("gid_tbl_len")),
                a.get(JAVA_INT, off("port_cap_flags")),
                Integer.toUnsignedLong(a.get(JAVA_INT, off("max_msg_sz"))),
                Short.toUnsignedInt(a.get(JAVA_SHORT, off("lid"))),
                Byte.toUnsignedInt(a.get(JAVA_BYTE, off("phys_state"))),
                Byte.toUnsignedInt(a.get(JAVA_BYTE, off("link_layer"))));
    }

    /** Whether the port is {@code IBV_PORT_ACTIVE}. */
    public boolean isActive() {
        return state == STATE_ACTIVE;
    }

    /** Whether the link layer is Ethernet (RoCE: addressing needs a GID / GRH). */
    public boolean isEthernet() {
        return linkLayer == LINK_LAYER_ETHERNET;
    }

    /** Bytes of an {@code enum ibv_mtu} value (1 → 256 … 5 → 4096). */
    public static int mtuBytes(int mtu) {
        return 128 << mtu;
    }

    /** The name of a port state, e.g. {@code PORT_ACTIVE}. */
    public static String stateName(int state) {
        return switch (state) {
            case 0 -> "PORT_NOP";
            case STATE_DOWN -> "PORT_DOWN";
            case STATE_INIT -> "PORT_INIT";
            case STATE_ARMED -> "PORT_ARMED";
            case STATE_ACTIVE -> "PORT_ACTIVE";
            case 5 -> "PORT_ACTIVE_DEFER";
            default -> "PORT_STATE_" + state;
        };
    }

    @Override
    public String toString() {
        return "PortAttributes[" + stateName(state) + ", active_mtu " + mtuBytes(activeMtu) + ", max_mtu "
                + mtuBytes(maxMtu) + ", gid_tbl_len " + gidTableLength + ", max_msg_sz " + maxMessageSize
                + ", lid " + lid + ", link_layer " + (isEthernet() ? "Ethernet" : linkLayer == 1 ? "InfiniBand" : linkLayer)
                + "]";
    }
}
