package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/**
 * Layout of the start of {@code struct ibv_device_attr_ex} ({@code ibv_query_device_ex}): the classic attributes, the
 * comp mask and the on-demand paging capabilities. The rest of the struct is not read, but the provider is told its
 * whole size ({@link #SIZE}).
 */
final class IbvDeviceAttrEx {
    static final StructLayout ODP_CAPS = struct("ibv_odp_caps",
            u64("general_caps"),
            struct("per_transport_caps",
                    u32("rc_odp_caps"),
                    u32("uc_odp_caps"),
                    u32("ud_odp_caps")));

    static final StructLayout LAYOUT = structPrefix("ibv_device_attr_ex",
            IbvDeviceAttr.LAYOUT.withName("orig_attr"),
            u32("comp_mask"),
            ODP_CAPS.withName("odp_caps"));

    /** {@code sizeof(struct ibv_device_attr_ex)} in the header the layout comes from. */
    static final long SIZE = 400;
    static final long ODP_GENERAL_CAPS = offset(LAYOUT, "odp_caps.general_caps");
    static final long ODP_RC_CAPS = offset(LAYOUT, "odp_caps.per_transport_caps.rc_odp_caps");

    private IbvDeviceAttrEx() {
    }
}
