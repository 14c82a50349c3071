package dev.rdmarpc.transport.rdma.verbs;

/** A failed verbs call: names the call and the errno, e.g. {@code ibv_modify_qp(RTR) failed: errno 22 (EINVAL)}. */
public class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int errno;

    /** A failure of {@code call} with {@code errno} (0 if the call gave none) and an optional hint appended to the message. */
    public VerbsException(String call, int errno, String hint) {
        super(message(call, errno, hint));
        this.call = call;
        this.errno = errno;
    }

    /** A failure of {@code call} with {@code errno}. */
    public VerbsException(String call, int errno) {
        this(call, errno, null);
    }

    private static String message(String call, int errno, String hint) {
        StringBuilder sb = new StringBuilder(call).append(" failed");
        if (errno != 0) {
            sb.append(": ").append(Errno.describe(errno));
        }
        if (hint != null && !hint.isEmpty()) {
            sb.append(errno != 0 ? "; " : ": ").append(hint);
        }
        return sb.toString();
    }

    /** The verbs call that failed, e.g. {@code ibv_modify_qp(RTR)}. */
    public String call() {
        return call;
    }

    /** The errno of the failure (positive), or 0 if the call reported none. */
    public int errno() {
        return errno;
    }

    /** The symbolic errno name, e.g. {@code EINVAL}. */
    public String errnoName() {
        return Errno.name(errno);
    }

    /**
     * The errno of a verbs call that returns an int status.
     * <p>libibverbs calls return 0 or a positive errno; some return -1 and set errno; some providers (rxe)
     * return a negative errno. This folds all three into a positive errno (0 = success).
     */
    static int errnoOf(int rc, int capturedErrno) {
        if (rc == 0) {
            return 0;
        }
        if (rc > 0) {
            return rc;
        }
        if (rc == -1 && capturedErrno > 0) {
            return capturedErrno;
        }
        return -rc;
    }
}
