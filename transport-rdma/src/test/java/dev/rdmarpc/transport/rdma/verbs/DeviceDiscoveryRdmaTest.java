package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.DEVICE;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.GID_INDEX;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.PORT;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.log;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Device discovery, device/port/GID queries on a real verbs device (rxe0 in the guest). */
@Tag("rdma")
class DeviceDiscoveryRdmaTest {

    @Test
    void findsTheDeviceWithAnActivePortAndARoceV2Gid() {
        Map<String, Integer> before = RdmaTestEnv.resourceCounts();
        IbvContext ctx;
        try (DeviceList list = Verbs.deviceList()) {
            assertFalse(list.isEmpty(), () -> "no RDMA device: " + list.emptyReason());
            assertNull(list.emptyReason());
            log("devices: " + list);
            RdmaDevice device = list.find(DEVICE).orElseThrow(() -> new AssertionError(DEVICE + " not in " + list));
            assertNotEquals(0L, device.guid(), "node GUID");
            ctx = device.open();
        }
        try (ctx) {
            assertEquals(DEVICE, ctx.deviceName());
            assertTrue(ctx.asyncFd() >= 0);
            assertTrue(ctx.numCompVectors() >= 1);

            DeviceAttributes dev = ctx.queryDevice();
            log("device attributes: " + dev);
            assertTrue(dev.maxQp() > 0 && dev.maxCqe() > 0 && dev.maxMr() > 0 && dev.maxPd() > 0);
            assertTrue(dev.maxSrq() > 0 && dev.maxSrqWr() > 0, "SRQ support");
            assertTrue(dev.physPortCount() >= PORT);
            log("memory windows: " + ((dev.deviceCapFlags() & DeviceAttributes.CAP_MEM_WINDOW) != 0)
                    + ", type 2A: " + ((dev.deviceCapFlags() & DeviceAttributes.CAP_MEM_WINDOW_TYPE_2A) != 0)
                    + ", type 2B: " + ((dev.deviceCapFlags() & DeviceAttributes.CAP_MEM_WINDOW_TYPE_2B) != 0)
                    + ", max_mw " + dev.maxMw());

            PortAttributes port = ctx.queryPort(PORT);
            log("port " + PORT + ": " + port);
            assertTrue(port.isActive(), () -> "port " + PORT + " is " + PortAttributes.stateName(port.state()));
            boolean rxe = DEVICE.startsWith("rxe"); // the guest's Soft-RoCE: its GID table is known
            if (rxe) {
                assertTrue(port.isEthernet(), "RoCE port (link layer Ethernet)");
            }
            assertTrue(port.gidTableLength() > GID_INDEX);
            assertTrue(port.activeMtu() >= PortAttributes.MTU_256 && port.activeMtu() <= port.maxMtu());

            Gid gid = ctx.queryGid(PORT, GID_INDEX);
            String type = RdmaTestEnv.sysfs("/sys/class/infiniband/" + DEVICE + "/ports/" + PORT
                    + "/gid_attrs/types/" + GID_INDEX);
            log("GID[" + GID_INDEX + "] = " + gid + " (" + type + "), GID[0] = " + ctx.queryGid(PORT, 0));
            if (rxe) {
                assertTrue(gid.isIpv4Mapped(), () -> "GID index " + GID_INDEX + " is IPv4-mapped: " + gid);
                assertEquals("RoCE v2", type, "GID type from sysfs");
            } else if (port.isEthernet()) {
                assertFalse(gid.isZero(), () -> "RoCE GID index " + GID_INDEX + " is set: " + gid);
            }

            VerbsException badPort = assertThrows(VerbsException.class, () -> ctx.queryPort(99));
            log("query of port 99: " + badPort.getMessage());
            assertTrue(badPort.getMessage().startsWith("ibv_query_port(port 99) failed: errno "), badPort.getMessage());
            assertNotEquals(0, badPort.errno());

            Map<String, Integer> during = RdmaTestEnv.resourceCounts();
            if (before != null) {
                assertEquals(before.get("ctx") + 1, during.get("ctx"), "one more user context while open");
            }
        }
        assertTrue(ctx.isClosed());
        assertThrows(IllegalStateException.class, ctx::queryDevice);
        if (before != null) {
            assertEquals(before, RdmaTestEnv.resourceCounts(), "kernel objects after close");
        }
    }
}
