package dev.rdmarpc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The builders' explicit RDMA device choice: what it accepts and its defaults. */
class RdmaDeviceChoiceTest {
    @Test
    void unsetPartsStayAutomatic() {
        assertEquals(new RdmaDeviceChoice("mlx5_1", 0, -1), RdmaDeviceChoice.named("mlx5_1"));
        assertEquals(new RdmaDeviceChoice("rxe1", 2, 3), RdmaDeviceChoice.named("rxe1").withPort(2).withGidIndex(3));
        assertEquals(new RdmaDeviceChoice(null, 0, 1), new RdmaDeviceChoice(null, 0, -1).withGidIndex(1));
    }

    @Test
    void impossibleValuesAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> new RdmaDeviceChoice(" ", 0, -1));
        assertThrows(IllegalArgumentException.class, () -> new RdmaDeviceChoice(null, -1, -1));
        assertThrows(IllegalArgumentException.class, () -> new RdmaDeviceChoice(null, 256, -1));
        assertThrows(IllegalArgumentException.class, () -> new RdmaDeviceChoice(null, 0, -2));
        assertThrows(NullPointerException.class, () -> RdmaDeviceChoice.named(null));
        assertThrows(NullPointerException.class, () -> RpcChannel.forAddress("127.0.0.1", 1).rdmaDevice(null));
        assertThrows(NullPointerException.class, () -> RpcServer.forPort(0).rdmaDevice(null));
    }
}
