package dev.rdmarpc.transport.rdma.verbs;

/** Linux errno numbers and their symbolic names (x86-64 / aarch64 generic values). */
public final class Errno {
    /** Operation not permitted. */
    public static final int EPERM = 1;
    /** No such file or directory. */
    public static final int ENOENT = 2;
    /** Interrupted system call. */
    public static final int EINTR = 4;
    /** Try again. */
    public static final int EAGAIN = 11;
    /** Out of memory (also: a work queue is full). */
    public static final int ENOMEM = 12;
    /** Permission denied. */
    public static final int EACCES = 13;
    /** Device or resource busy. */
    public static final int EBUSY = 16;
    /** Invalid argument. */
    public static final int EINVAL = 22;
    /** Function not implemented (kernel without RDMA support). */
    public static final int ENOSYS = 38;
    /** Operation not supported. */
    public static final int EOPNOTSUPP = 95;
    /** Connection timed out. */
    public static final int ETIMEDOUT = 110;

    // Index = errno number; generated from <asm-generic/errno-base.h> and <asm-generic/errno.h>.
    private static final String[] NAMES = {
            null, "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG",
            "ENOEXEC", "EBADF", "ECHILD", "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK",
            "EBUSY", "EEXIST", "EXDEV", "ENODEV", "ENOTDIR", "EISDIR", "EINVAL", "ENFILE",
            "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC", "ESPIPE", "EROFS", "EMLINK",
            "EPIPE", "EDOM", "ERANGE", "EDEADLK", "ENAMETOOLONG", "ENOLCK", "ENOSYS", "ENOTEMPTY",
            "ELOOP", null, "ENOMSG", "EIDRM", "ECHRNG", "EL2NSYNC", "EL3HLT", "EL3RST",
            "ELNRNG", "EUNATCH", "ENOCSI", "EL2HLT", "EBADE", "EBADR", "EXFULL", "ENOANO",
            "EBADRQC", "EBADSLT", null, "EBFONT", "ENOSTR", "ENODATA", "ETIME", "ENOSR",
            "ENONET", "ENOPKG", "EREMOTE", "ENOLINK", "EADV", "ESRMNT", "ECOMM", "EPROTO",
            "EMULTIHOP", "EDOTDOT", "EBADMSG", "EOVERFLOW", "ENOTUNIQ", "EBADFD", "EREMCHG", "ELIBACC",
            "ELIBBAD", "ELIBSCN", "ELIBMAX", "ELIBEXEC", "EILSEQ", "ERESTART", "ESTRPIPE", "EUSERS",
            "ENOTSOCK", "EDESTADDRREQ", "EMSGSIZE", "EPROTOTYPE", "ENOPROTOOPT", "EPROTONOSUPPORT", "ESOCKTNOSUPPORT", "EOPNOTSUPP",
            "EPFNOSUPPORT", "EAFNOSUPPORT", "EADDRINUSE", "EADDRNOTAVAIL", "ENETDOWN", "ENETUNREACH", "ENETRESET", "ECONNABORTED",
            "ECONNRESET", "ENOBUFS", "EISCONN", "ENOTCONN", "ESHUTDOWN", "ETOOMANYREFS", "ETIMEDOUT", "ECONNREFUSED",
            "EHOSTDOWN", "EHOSTUNREACH", "EALREADY", "EINPROGRESS", "ESTALE", "EUCLEAN", "ENOTNAM", "ENAVAIL",
            "EISNAM", "EREMOTEIO", "EDQUOT", "ENOMEDIUM", "EMEDIUMTYPE", "ECANCELED", "ENOKEY", "EKEYEXPIRED",
            "EKEYREVOKED", "EKEYREJECTED", "EOWNERDEAD", "ENOTRECOVERABLE", "ERFKILL", "EHWPOISON"
    };

    private Errno() {
    }

    /** The symbolic name of {@code errno}, e.g. {@code "EINVAL"}, or {@code "errno<n>"} if unknown. */
    public static String name(int errno) {
        if (errno > 0 && errno < NAMES.length && NAMES[errno] != null) {
            return NAMES[errno];
        }
        return "errno" + errno;
    }

    /** {@code "errno 22 (EINVAL)"}. */
    public static String describe(int errno) {
        return "errno " + errno + " (" + name(errno) + ")";
    }
}
