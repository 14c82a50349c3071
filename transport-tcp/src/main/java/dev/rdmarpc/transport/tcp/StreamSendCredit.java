package dev.rdmarpc.transport.tcp;

/**
 * The credit an HTTP/2 bridge owes core's send window for one stream: the MESSAGE payload bytes core sent that have
 * reached the socket, given back as core's own receivers give credit back (PROTOCOL.md "Flow control"): once it is
 * half the window, or as soon as the window core has left falls below half; otherwise held, so that a call whose
 * messages fit in half the window (every small unary call) costs core no WINDOW frame. Used on the connection's I/O
 * thread only.
 */
final class StreamSendCredit {
    private final int window;
    /** Bytes core sent on the stream and has not had back. */
    private int outstanding;
    /** Bytes of those that reached the socket and are not yet given back. */
    private int owed;

    /** The credit of a stream whose window core was given as {@code window} bytes. */
    StreamSendCredit(int window) {
        this.window = window;
    }

    /** Core sent {@code bytes} of MESSAGE payload on the stream. */
    void sent(int bytes) {
        outstanding += bytes;
    }

    /** {@code bytes} of what core sent reached the socket: returns the credit to give core now, or 0 to hold it. */
    int written(int bytes) {
        owed += bytes;
        if (owed < window / 2 && window - outstanding >= window / 2) {
            return 0;
        }
        int credit = owed;
        owed = 0;
        outstanding -= credit;
        return credit;
    }
}
