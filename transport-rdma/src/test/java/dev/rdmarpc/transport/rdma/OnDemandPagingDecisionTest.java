package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.transport.rdma.verbs.AccessFlags;
import dev.rdmarpc.transport.rdma.verbs.OdpCapabilities;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * When attachment memory is registered on demand: only when the device reports ODP with RC remote READ, and never
 * when {@code rdmarpc.rdma.onDemandPaging=off}; the registration cache then asks for ON_DEMAND.
 */
class OnDemandPagingDecisionTest {
    private static final OdpCapabilities RC_READ =
            new OdpCapabilities(OdpCapabilities.SUPPORT, OdpCapabilities.RC_SEND | OdpCapabilities.RC_READ, true);
    private static final OdpCapabilities RC_WITHOUT_READ =
            new OdpCapabilities(OdpCapabilities.SUPPORT, OdpCapabilities.RC_SEND | OdpCapabilities.RC_WRITE, true);
    private static final OdpCapabilities READ_BIT_WITHOUT_SUPPORT = new OdpCapabilities(0, OdpCapabilities.RC_READ, true);

    @Test
    void automaticallyOnWhenTheDevicePagesRcReadsOnDemand() {
        assertTrue(RegistrationCache.useOnDemandPaging(null, RC_READ));
        assertTrue(RegistrationCache.useOnDemandPaging("auto", RC_READ));
        assertTrue(RegistrationCache.useOnDemandPaging(" AUTO ", RC_READ));
    }

    @Test
    void offWithoutOdpOrWithoutRcRead() {
        assertFalse(RegistrationCache.useOnDemandPaging(null, OdpCapabilities.NONE));
        assertFalse(RegistrationCache.useOnDemandPaging(null, RC_WITHOUT_READ));
        assertFalse(RegistrationCache.useOnDemandPaging(null, READ_BIT_WITHOUT_SUPPORT));
        assertFalse(RegistrationCache.useOnDemandPaging("on", OdpCapabilities.NONE), "asking cannot invent support");
    }

    @Test
    void thePropertyTurnsItOff() {
        assertFalse(RegistrationCache.useOnDemandPaging("off", RC_READ));
        assertFalse(RegistrationCache.useOnDemandPaging("false", RC_READ));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RegistrationCache.useOnDemandPaging("sometimes", RC_READ));
        assertTrue(e.getMessage().contains("rdmarpc.rdma.onDemandPaging"), e.getMessage());
    }

    @Test
    void theCacheRegistersWithOnDemandOnlyWhenDecided() {
        int[] lastAccess = new int[1];
        RegistrationCache.Registrar<MemorySegment> registrar = new RegistrationCache.Registrar<>() {
            @Override
            public MemorySegment register(MemorySegment memory, int access) {
                lastAccess[0] = access;
                return memory;
            }

            @Override
            public void deregister(MemorySegment registration) {
            }
        };
        try (Arena arena = Arena.ofConfined()) {
            for (OdpCapabilities device : new OdpCapabilities[]{RC_READ, RC_WITHOUT_READ, OdpCapabilities.NONE}) {
                boolean odp = RegistrationCache.useOnDemandPaging(null, device);
                RegistrationCache<MemorySegment> cache = new RegistrationCache<>(registrar, 1 << 20, 4, AccessFlags.MW_BIND, odp);
                cache.release(cache.acquire(arena.allocate(4096, 4096)));
                assertEquals(AccessFlags.MW_BIND | (odp ? AccessFlags.ON_DEMAND : 0), lastAccess[0], device::toString);
                cache.clear();
            }
        }
    }

    @Test
    void describesWhatTheDeviceReports() {
        assertEquals("general_caps 0x1 (ODP), rc_odp_caps 0x9 (SEND|READ)", RC_READ.toString());
        assertTrue(OdpCapabilities.NONE.toString().contains("not reported"));
    }
}
