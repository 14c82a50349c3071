package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.protocol.ProtocolException;

/**
 * One connection's receive credits in both directions: how many SENDs this side may still have outstanding at the
 * peer ({@link #available()}, at most the peer's grant), and how many of the peer's SENDs this side has finished with
 * and owes back ({@link #owed()}). The last credit is kept for a SEND that returns credits, so two peers that both
 * wait for credits never wait on each other. Guarded by the send path's lock.
 */
final class CreditLedger {
    private final int granted;
    private final int updateThreshold;
    private int available;
    private int owed;
    private boolean stalled;

    /** @param granted SENDs the peer lets this side have outstanding (its {@code CAP_RDMA} credits, at least 2) */
    CreditLedger(int granted) {
        this.granted = granted;
        this.available = granted;
        this.updateThreshold = Math.max(1, granted / 2);
    }

    /** Credits this side may still spend. */
    int available() {
        return available;
    }

    /** Credits this side owes the peer. */
    int owed() {
        return owed;
    }

    /**
     * Whether a SEND may be posted now: it needs one credit when it returns credits, two otherwise (the last one is
     * kept for a SEND that returns credits). Counts a stall the first time a SEND has to wait.
     */
    boolean maySend() {
        if (available >= (owed > 0 ? 1 : 2)) {
            stalled = false;
            return true;
        }
        if (!stalled) {
            stalled = true;
            RdmaMetrics.CREDIT_STALLS.increment();
        }
        return false;
    }

    /** A SEND was posted: spends one credit and returns what it carries back to the peer (all that was owed). */
    int spend() {
        available--;
        int carried = owed;
        owed = 0;
        return carried;
    }

    /** The peer returned {@code n} credits. */
    void returned(int n) {
        int now = available + n;
        if (now > granted || now < 0 || n < 0) {
            throw new ProtocolException("the peer returned more receive credits than it granted (" + now + " > "
                    + granted + ")");
        }
        available = now;
    }

    /** This side finished with {@code n} more of the peer's SENDs. */
    void owe(int n) {
        owed += n;
    }

    /** Whether enough is owed that a SEND carrying only credits should go when nothing else will. */
    boolean updateDue() {
        return owed >= updateThreshold;
    }
}
