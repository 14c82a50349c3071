package dev.rdmarpc.transport.rdma;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether an open device is still registered, from sysfs: each verbs device has a {@code class/infiniband_verbs/uverbsN}
 * directory whose {@code ibdev} file names it, and the kernel removes that directory first when the device is being
 * removed ({@code rdma link delete}, a driver unbind). A driver that cannot disassociate user contexts (Soft-RoCE among
 * them) sends no {@code IBV_EVENT_DEVICE_FATAL} then: the removal waits until every process has closed the device, so
 * the transport must notice it by itself and let go. When sysfs cannot be read, or did not list the device when it
 * was opened, nothing is concluded.
 */
final class DevicePresence {
    private enum Listing { LISTED, ABSENT, UNKNOWN }

    private final Path verbs;
    private final String device;
    private final boolean listedAtOpen;

    DevicePresence(Path sysfs, String device) {
        this.verbs = sysfs.resolve("class").resolve("infiniband_verbs");
        this.device = device;
        this.listedAtOpen = listed() == Listing.LISTED;
    }

    /** Whether the device, listed when it was opened, is no longer listed (it is being removed). */
    boolean removed() {
        return listedAtOpen && listed() == Listing.ABSENT;
    }

    /** Whether sysfs lists the device now. */
    private Listing listed() {
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(verbs, "uverbs*")) {
            for (Path dir : dirs) {
                try {
                    if (Files.readString(dir.resolve("ibdev"), StandardCharsets.US_ASCII).trim().equals(device)) {
                        return Listing.LISTED;
                    }
                } catch (IOException e) {
                    // that device went away while we looked: not ours, or ours, which the next look tells
                }
            }
            return Listing.ABSENT;
        } catch (IOException | RuntimeException e) {
            return Listing.UNKNOWN;
        }
    }
}
