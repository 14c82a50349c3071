package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.transport.rdma.verbs.DeviceList;
import dev.rdmarpc.transport.rdma.verbs.Gid;
import dev.rdmarpc.transport.rdma.verbs.IbvContext;
import dev.rdmarpc.transport.rdma.verbs.PortAttributes;
import dev.rdmarpc.transport.rdma.verbs.RdmaDevice;
import dev.rdmarpc.transport.rdma.verbs.Verbs;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds the device, port and GID to use: the configured ones ({@code rdmarpc.rdma.device}, {@code .port},
 * {@code .gidIndex}), or the first device in libibverbs' list with an ACTIVE port, its first active port and, on RoCE,
 * the best-scored non-zero GID among the first 32 entries: RoCE v2 and IPv4-mapped, then RoCE v2, then IPv4-mapped
 * (sysfs {@code gid_attrs/types}), else index 0. The choice does not look at the address or route of the TCP
 * connection beside it; on a host with several RDMA ports or addresses, configure it.
 * "No RDMA here" (no library, ENOSYS, no device, no active port) is an {@link Unavailable} with the reason.
 */
final class DeviceSelector {
    /** What was chosen; the context is open and now belongs to the caller. */
    record Selection(IbvContext context, int port, PortAttributes portAttributes, int gidIndex, Gid gid) {
    }

    /** Why no device can be used, with the fallback reason key. */
    static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;
        final String key;

        Unavailable(String key, String reason) {
            super(reason, null, false, false);
            this.key = key;
        }
    }

    private DeviceSelector() {
    }

    static Selection select(RdmaConfig config) throws Unavailable {
        DeviceList list;
        try {
            list = Verbs.deviceList();
        } catch (VerbsException e) {
            throw new Unavailable(Fallbacks.NO_DEVICE, e.getMessage());
        }
        try (list) {
            if (list.isEmpty()) {
                throw new Unavailable(Fallbacks.NO_DEVICE, list.emptyReason());
            }
            List<RdmaDevice> candidates = new ArrayList<>();
            if (config.device() != null) {
                candidates.add(list.find(config.device()).orElseThrow(() -> new Unavailable(Fallbacks.NO_DEVICE,
                        "RDMA device " + config.device() + " (rdmarpc.rdma.device) not found among " + list.devices())));
            } else {
                candidates.addAll(list.devices());
            }
            List<String> seen = new ArrayList<>();
            for (RdmaDevice d : candidates) {
                IbvContext ctx;
                try {
                    ctx = d.open();
                } catch (VerbsException e) {
                    seen.add(d.name() + ": " + e.getMessage());
                    continue;
                }
                Selection s = null;
                try {
                    s = choosePort(ctx, config, seen);
                } catch (RuntimeException e) {
                    seen.add(d.name() + ": " + e.getMessage());
                }
                if (s != null) {
                    return s;
                }
                ctx.close();
            }
            throw new Unavailable(Fallbacks.NO_DEVICE, "no RDMA device with an active port: " + String.join("; ", seen));
        }
    }

    private static Selection choosePort(IbvContext ctx, RdmaConfig config, List<String> seen) {
        int ports = ctx.queryDevice().physPortCount();
        int first = config.port() > 0 ? config.port() : 1;
        int last = config.port() > 0 ? config.port() : ports;
        for (int port = first; port <= last; port++) {
            PortAttributes attrs = ctx.queryPort(port);
            if (!attrs.isActive()) {
                seen.add(ctx.deviceName() + " port " + port + " is " + PortAttributes.stateName(attrs.state()));
                continue;
            }
            int gidIndex = config.gidIndex() >= 0 ? config.gidIndex() : chooseGid(ctx, port, attrs);
            Gid gid = ctx.queryGid(port, gidIndex);
            if (attrs.isEthernet() && gid.isZero()) {
                seen.add(ctx.deviceName() + " port " + port + " has no GID at index " + gidIndex);
                continue;
            }
            return new Selection(ctx, port, attrs, gidIndex, gid);
        }
        return null;
    }

    /** RoCE: a RoCE v2 IPv4-mapped GID, else any RoCE v2 one, else an IPv4-mapped one, else index 0. */
    static int chooseGid(IbvContext ctx, int port, PortAttributes attrs) {
        if (!attrs.isEthernet()) {
            return 0;
        }
        int best = -1;
        int bestScore = 0;
        for (int i = 0; i < Math.min(attrs.gidTableLength(), 32); i++) {
            Gid gid;
            try {
                gid = ctx.queryGid(port, i);
            } catch (VerbsException e) {
                continue;
            }
            if (gid.isZero()) {
                continue;
            }
            String type = sysfs("/sys/class/infiniband/" + ctx.deviceName() + "/ports/" + port + "/gid_attrs/types/" + i);
            boolean v2 = type != null && type.toLowerCase().contains("v2");
            int score = (v2 ? 2 : 0) + (gid.isIpv4Mapped() ? 1 : 0) + 1;
            if (score > bestScore) {
                bestScore = score;
                best = i;
            }
        }
        return Math.max(best, 0);
    }

    private static String sysfs(String path) {
        try {
            List<String> lines = Files.readAllLines(Path.of(path));
            return lines.isEmpty() ? null : lines.getFirst().strip();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
