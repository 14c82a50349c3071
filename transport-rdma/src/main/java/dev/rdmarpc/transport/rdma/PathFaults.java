package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.transport.rdma.verbs.QpState;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;
import dev.rdmarpc.transport.rdma.verbs.WorkCompletion;

import java.lang.System.Logger.Level;
import java.net.InetAddress;

/**
 * What happens when an RDMA connection's path fails after setup: the transport gave up on the peer (retries or RNR
 * retries exhausted, a fatal completion), a work request flushed while we had not closed the connection, the queue
 * pair found in the error state, or a fatal queue-pair event. The connection closes (core fails its calls with
 * UNAVAILABLE and closes the TCP connection under it), the failure is counted ({@code rdmarpc.rdma.path.faults}) and,
 * while the TCP connection is still up (so the peer is alive and only its RDMA path broke), the peer is remembered
 * like a peer whose setup failed ({@link PeerFallbacks}): its new connections stay on TCP for
 * {@code rdmarpc.rdma.peerFallbackSeconds}. A connection that is already closing (its TCP connection was lost, the
 * application closed it) is not a path fault; nor is an error about what was sent (a remote access or invalid request
 * error: bad input, closed as such).
 */
final class PathFaults {
    /** How often each connection's queue-pair state and the device's presence are checked; 0 never. */
    static final long CHECK_MILLIS = Math.max(0, Long.getLong("rdmarpc.rdma.faultCheckMillis", 1000));

    private PathFaults() {
    }

    /** Whether a work completion error {@code status} says the path to the peer broke. */
    static boolean isPathStatus(int status) {
        return status == WorkCompletion.STATUS_RETRY_EXC_ERR || status == WorkCompletion.STATUS_RNR_RETRY_EXC_ERR
                || status == WorkCompletion.STATUS_FATAL_ERR;
    }

    /** The path of open endpoint {@code ep} failed: remembers its peer, counts the fault and closes the connection. */
    static void failed(RdmaEndpoint ep, String reason) {
        if (!ep.isOpen()) {
            return;
        }
        RdmaMetrics.PATH_FAULTS.increment();
        InetAddress peer = PeerFallbacks.hostOf(ep.remoteAddress());
        if (ep.base().isOpen() && PeerFallbacks.PROCESS.remember(peer)) {
            Fallbacks.LOG.log(Level.WARNING, "RDMA with {0} failed at run time on {1} port {2} ({3}): its new connections "
                            + "stay on TCP for {4} s (rdmarpc.rdma.peerFallbackSeconds)", peer.getHostAddress(),
                    ep.context.deviceName(), ep.context.port(), reason, PeerFallbacks.PROCESS.expirySeconds());
        }
        ep.closeOnError(new IllegalStateException(reason));
    }

    /**
     * Poller: fails every open endpoint of {@code context} whose queue pair the device reports in the error state. A
     * queue pair that went to ERR while nothing was posted on it raises no completion, and not every device sends
     * {@code IBV_EVENT_QP_LAST_WQE_REACHED}: this check bounds how long its calls wait to about {@link #CHECK_MILLIS}.
     */
    static void checkQueuePairs(RdmaDeviceContext context) {
        context.poller().drainCompletions(); // a completion error already waiting tells more than the state
        for (RdmaEndpoint ep : context.endpoints()) {
            if (!ep.isOpen() || !ep.connected) {
                continue;
            }
            int state;
            try {
                state = ep.qp.queryState();
            } catch (VerbsException | IllegalStateException e) {
                continue; // going away: its own teardown or completions say why
            }
            if (state == QpState.ERR) {
                failed(ep, "RDMA queue pair qp " + ep.qp.qpNum() + " is in the error state");
            }
        }
    }
}
