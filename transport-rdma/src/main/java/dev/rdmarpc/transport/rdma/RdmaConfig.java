package dev.rdmarpc.transport.rdma;

/**
 * The RDMA transport's settings, read once from system properties {@code rdmarpc.rdma.*} when the first connection
 * asks for RDMA. Defaults suit a real RNIC; the rxe test guest sets {@code spinMicros=0} (event mode).
 *
 * @param device          device name ({@code rdmarpc.rdma.device}); null = the first with an active port
 * @param port            port number ({@code rdmarpc.rdma.port}); 0 = the first active port
 * @param gidIndex        GID index ({@code rdmarpc.rdma.gidIndex}); -1 = a RoCE v2 IPv4-mapped entry if any, else 0
 * @param receiveBufferSize bytes of each SRQ receive buffer, the largest eager SEND ({@code recvBufferSize})
 * @param srqDepth        receives kept posted on the device's shared receive queue ({@code srqDepth})
 * @param credits         SENDs a peer may have in flight to one connection before credits return ({@code credits})
 * @param sendQueueDepth  send work requests per queue pair ({@code sendQueueDepth})
 * @param maxInline       largest inline SEND asked of the device ({@code maxInline}); the device may grant less
 * @param spinMicros      how long the poller busy-polls before arming the CQ and blocking ({@code spinMicros})
 * @param rendezvous      "auto" (memory windows when the device has type 2, else a region per rendezvous),
 *                        "window" or "region" ({@code rendezvous})
 * @param maxConnections  queue pairs per device context ({@code maxConnections}); sizes the shared CQ
 * @param minRnrTimer     RNR NAK timer code advertised to peers ({@code minRnrTimer}; 12 = 0.64 ms)
 * @param ackTimeout      local ACK timeout code ({@code ackTimeout}; 14 ≈ 67 ms)
 * @param retryCount      transport retries before a connection fails ({@code retryCount})
 */
record RdmaConfig(String device, int port, int gidIndex, int receiveBufferSize, int srqDepth, int credits,
                         int sendQueueDepth, int maxInline, long spinMicros, String rendezvous, int maxConnections,
                         int minRnrTimer, int ackTimeout, int retryCount) {

    /** The settings from system properties, with defaults. */
    public static RdmaConfig fromSystemProperties() {
        return new RdmaConfig(
                System.getProperty("rdmarpc.rdma.device"),
                Integer.getInteger("rdmarpc.rdma.port", 0),
                Integer.getInteger("rdmarpc.rdma.gidIndex", -1),
                Integer.getInteger("rdmarpc.rdma.recvBufferSize", 8192),
                Integer.getInteger("rdmarpc.rdma.srqDepth", 1024),
                Integer.getInteger("rdmarpc.rdma.credits", 64),
                Integer.getInteger("rdmarpc.rdma.sendQueueDepth", 256),
                Integer.getInteger("rdmarpc.rdma.maxInline", 256),
                Long.getLong("rdmarpc.rdma.spinMicros", 20),
                System.getProperty("rdmarpc.rdma.rendezvous", "auto"),
                Integer.getInteger("rdmarpc.rdma.maxConnections", 256),
                Integer.getInteger("rdmarpc.rdma.minRnrTimer", 12),
                Integer.getInteger("rdmarpc.rdma.ackTimeout", 14),
                Integer.getInteger("rdmarpc.rdma.retryCount", 7)).validated();
    }

    /** Checks ranges and rounds the send queue to a power of two. */
    public RdmaConfig validated() {
        if (receiveBufferSize < 1024 || receiveBufferSize > (1 << 20) || Integer.bitCount(receiveBufferSize) != 1) {
            throw new IllegalArgumentException("rdmarpc.rdma.recvBufferSize must be a power of two in [1 KiB, 1 MiB]: "
                    + receiveBufferSize);
        }
        if (srqDepth < 8) {
            throw new IllegalArgumentException("rdmarpc.rdma.srqDepth must be at least 8: " + srqDepth);
        }
        if (credits < 2 || credits > 65535) {
            throw new IllegalArgumentException("rdmarpc.rdma.credits must be in [2, 65535]: " + credits);
        }
        if (sendQueueDepth < 16 || sendQueueDepth > 1 << 15) {
            throw new IllegalArgumentException("rdmarpc.rdma.sendQueueDepth must be in [16, 32768]: " + sendQueueDepth);
        }
        if (!rendezvous.equals("auto") && !rendezvous.equals("window") && !rendezvous.equals("region")) {
            throw new IllegalArgumentException("rdmarpc.rdma.rendezvous must be auto, window or region: " + rendezvous);
        }
        int sq = Integer.highestOneBit(sendQueueDepth - 1) << 1;
        return new RdmaConfig(device, port, gidIndex, receiveBufferSize, srqDepth, credits, sq,
                Math.max(0, maxInline), Math.max(0, spinMicros), rendezvous, Math.max(1, maxConnections),
                minRnrTimer, ackTimeout, retryCount);
    }
}
