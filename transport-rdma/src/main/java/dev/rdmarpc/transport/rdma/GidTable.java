package dev.rdmarpc.transport.rdma;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds the RDMA device, port and GID index that carry one IP address, from the kernel's sysfs tree
 * ({@code class/infiniband/DEV/ports/N/gids/I} with {@code gid_attrs/ndevs/I} and {@code gid_attrs/types/I}): the
 * entry whose GID is the address (IPv4-mapped {@code ::ffff:a.b.c.d} for IPv4) and whose netdev is the interface that
 * holds it, RoCE v2 preferred to v1. InfiniBand ports have no netdev per GID and never match: their connections keep
 * the default choice. The root is a parameter so tests can use a fake tree.
 */
final class GidTable {
    /** sysfs as the kernel mounts it. */
    static final Path SYSFS = Path.of("/sys");
    private static final int MAX_GIDS_SCANNED = 256;

    /** Where an address lives: device, port and GID index, and whether the entry is RoCE v2. */
    record Match(String device, int port, int gidIndex, boolean roceV2) {
    }

    private GidTable() {
    }

    /**
     * The best entry for {@code address}.
     *
     * @param netdev the interface holding the address (null: any interface whose GID is the address)
     * @param port   only this port, or 0 for any
     */
    static Optional<Match> find(Path sysfsRoot, InetAddress address, String netdev, int port) {
        byte[] wanted = gidOf(address);
        Match best = null;
        for (Path dev : list(sysfsRoot.resolve("class/infiniband"))) {
            for (Path portDir : list(dev.resolve("ports"))) {
                int number = parse(portDir.getFileName().toString());
                if (number <= 0 || (port > 0 && number != port)) {
                    continue;
                }
                for (Path gidFile : list(portDir.resolve("gids"))) {
                    int index = parse(gidFile.getFileName().toString());
                    if (index < 0 || index >= MAX_GIDS_SCANNED || !java.util.Arrays.equals(wanted, readGid(gidFile))) {
                        continue;
                    }
                    String ndev = read(portDir.resolve("gid_attrs/ndevs/" + index));
                    if (ndev == null || (netdev != null && !netdev.equals(ndev))) {
                        continue; // InfiniBand (no netdev) or another interface with the same address
                    }
                    String type = read(portDir.resolve("gid_attrs/types/" + index));
                    boolean v2 = type != null && type.toLowerCase(Locale.ROOT).contains("v2");
                    Match m = new Match(dev.getFileName().toString(), number, index, v2);
                    if (best == null || (v2 && !best.roceV2())) {
                        best = m;
                    }
                }
            }
        }
        return Optional.ofNullable(best);
    }

    /** The 16 GID bytes an address appears as: IPv4 as {@code ::ffff:a.b.c.d}, IPv6 as is. */
    static byte[] gidOf(InetAddress address) {
        byte[] ip = address.getAddress();
        if (address instanceof Inet4Address) {
            byte[] gid = new byte[16];
            gid[10] = (byte) 0xff;
            gid[11] = (byte) 0xff;
            System.arraycopy(ip, 0, gid, 12, 4);
            return gid;
        }
        return ip;
    }

    /** Parses sysfs's {@code xxxx:xxxx:…} GID text; null when unreadable or malformed. */
    static byte[] readGid(Path file) {
        String text = read(file);
        if (text == null) {
            return null;
        }
        String hex = text.replace(":", "");
        if (hex.length() != 32) {
            return null;
        }
        try {
            return HexFormat.of().parseHex(hex);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static List<Path> list(Path dir) {
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            s.forEach(entries::add);
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        entries.sort(null);
        return entries;
    }

    private static int parse(String number) {
        try {
            return Integer.parseInt(number);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The first line of a sysfs file, stripped; null when it cannot be read (empty GID entries fail with EINVAL). */
    static String read(Path file) {
        try {
            List<String> lines = Files.readAllLines(file);
            return lines.isEmpty() ? null : lines.getFirst().strip();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
