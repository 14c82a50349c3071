package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The address → device, port and GID choice, on fake sysfs trees laid out as the kernel does. */
class GidTableTest {
    private static final String LINK_LOCAL = "fe80:0000:0000:0000:e491:b1ff:feea:00ee";
    private static final String ZERO = "0000:0000:0000:0000:0000:0000:0000:0000";

    @TempDir
    Path sysfs;

    @Test
    void theDeviceWhoseNetdevCarriesTheAddressWins() throws IOException {
        gid("rxe0", 1, 0, LINK_LOCAL, "RoCE v2", "dummy0");
        gid("rxe0", 1, 1, mapped(192, 168, 77, 1), "RoCE v2", "dummy0");
        gid("rxe1", 1, 0, "fe80:0000:0000:0000:fc44:37ff:feba:df12", "RoCE v2", "dummy1");
        gid("rxe1", 1, 1, mapped(192, 168, 78, 1), "RoCE v2", "dummy1");
        assertEquals(Optional.of(new GidTable.Match("rxe0", 1, 1, true)), find("192.168.77.1", "dummy0", 0));
        assertEquals(Optional.of(new GidTable.Match("rxe1", 1, 1, true)), find("192.168.78.1", "dummy1", 0));
        assertEquals(Optional.of(new GidTable.Match("rxe1", 1, 1, true)), find("192.168.78.1", null, 0),
                "without a known interface the GID alone decides");
        assertEquals(Optional.empty(), find("192.168.78.1", "dummy0", 0), "the GID of another interface does not count");
        assertEquals(Optional.empty(), find("192.168.79.1", null, 0), "an address no device carries");
        assertEquals(Optional.empty(), find("192.168.78.1", null, 2), "only the port asked for");
    }

    @Test
    void roceV2IsPreferredToV1() throws IOException {
        gid("mlx5_0", 1, 0, LINK_LOCAL, "IB/RoCE v1", "eth0");
        gid("mlx5_0", 1, 1, LINK_LOCAL, "RoCE v2", "eth0");
        gid("mlx5_0", 1, 2, mapped(10, 0, 0, 5), "IB/RoCE v1", "eth0");
        gid("mlx5_0", 1, 3, mapped(10, 0, 0, 5), "RoCE v2", "eth0");
        gid("mlx5_0", 1, 4, ZERO, null, null);
        assertEquals(Optional.of(new GidTable.Match("mlx5_0", 1, 3, true)), find("10.0.0.5", "eth0", 0));
    }

    @Test
    void aRoceV1OnlyEntryIsStillUsed() throws IOException {
        gid("mlx4_0", 2, 0, mapped(10, 0, 0, 6), "IB/RoCE v1", "eth1");
        assertEquals(Optional.of(new GidTable.Match("mlx4_0", 2, 0, false)), find("10.0.0.6", "eth1", 0));
    }

    @Test
    void anIpv6AddressMatchesItsOwnGid() throws IOException {
        gid("rxe0", 1, 0, LINK_LOCAL, "RoCE v2", "dummy0");
        gid("rxe0", 1, 2, "fd00:0000:0000:0000:0000:0000:0000:0001", "RoCE v2", "dummy0");
        assertEquals(Optional.of(new GidTable.Match("rxe0", 1, 2, true)), find("fd00::1", "dummy0", 0));
    }

    @Test
    void infinibandPortsHaveNoNetdevAndNeverMatch() throws IOException {
        Path port = sysfs.resolve("class/infiniband/mlx5_1/ports/1");
        Files.createDirectories(port.resolve("gids"));
        Files.writeString(port.resolve("gids/0"), mapped(10, 0, 0, 7) + "\n");
        assertEquals(Optional.empty(), find("10.0.0.7", "ib0", 0));
    }

    @Test
    void noInfinibandClassAtAll() throws IOException {
        assertEquals(Optional.empty(), find("10.0.0.8", "eth0", 0));
    }

    @Test
    void gidTextIsParsedAndMalformedTextIsNot() throws IOException {
        Path f = sysfs.resolve("gid");
        Files.writeString(f, mapped(1, 2, 3, 4) + "\n");
        assertArrayEquals(GidTable.gidOf(InetAddress.getByName("1.2.3.4")), GidTable.readGid(f));
        Files.writeString(f, "zz00:0000\n");
        assertNull(GidTable.readGid(f));
        assertNull(GidTable.readGid(sysfs.resolve("missing")));
        byte[] v4 = GidTable.gidOf(InetAddress.getByName("192.168.77.1"));
        assertTrue(v4[10] == (byte) 0xff && v4[11] == (byte) 0xff && v4[12] == (byte) 192 && v4[15] == 1);
    }

    private Optional<GidTable.Match> find(String address, String netdev, int port) throws IOException {
        return GidTable.find(sysfs, InetAddress.getByName(address), netdev, port);
    }

    /** One GID entry; a null type or netdev leaves that attribute file out (as for empty entries). */
    private void gid(String device, int port, int index, String gid, String type, String netdev) throws IOException {
        Path p = sysfs.resolve("class/infiniband/" + device + "/ports/" + port);
        Files.createDirectories(p.resolve("gids"));
        Files.createDirectories(p.resolve("gid_attrs/types"));
        Files.createDirectories(p.resolve("gid_attrs/ndevs"));
        Files.writeString(p.resolve("gids/" + index), gid + "\n");
        if (type != null) {
            Files.writeString(p.resolve("gid_attrs/types/" + index), type + "\n");
        }
        if (netdev != null) {
            Files.writeString(p.resolve("gid_attrs/ndevs/" + index), netdev + "\n");
        }
    }

    private static String mapped(int a, int b, int c, int d) {
        return String.format("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", a, b, c, d);
    }
}
