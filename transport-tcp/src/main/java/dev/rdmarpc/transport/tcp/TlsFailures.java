package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.TlsConfig;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandshakeTimeoutException;

import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Locale;

/** Turns the exception a TLS handshake failed with into a reason a person can act on. */
final class TlsFailures {
    /** A fatal alert the peer sent, as the JDK ("received fatal alert: x") and BoringSSL ("tlsv1_alert_x") word it. */
    private static final java.util.regex.Pattern RECEIVED_ALERT =
            java.util.regex.Pattern.compile("(?:received fatal alert: |sslv3_alert_|tlsv1_alert_)([a-z_]+)");

    private TlsFailures() {
    }

    /** The reason when the peer ended the handshake with an alert: it objects to this side. */
    private static String receivedAlert(String alert, boolean clientSide, String words) {
        String peer = clientSide ? "the server" : "the client";
        return switch (alert) {
            case "certificate_required" -> clientSide
                    ? "the server requires a client certificate it trusts, and this side sent none (none configured, "
                    + "or none issued by a CA the server accepts) (" + words + ")"
                    : "the client requires a certificate of this side (" + words + ")";
            case "certificate_expired" -> peer + " says this side's certificate has expired (" + words + ")";
            case "bad_certificate", "certificate_unknown", "unknown_ca", "unsupported_certificate", "certificate_revoked" ->
                    peer + " rejected this side's certificate (" + words + ")";
            case "no_application_protocol" ->
                    peer + " does not speak " + TlsConfig.ALPN_PROTOCOL + " over TLS (ALPN: " + words + ")";
            case "protocol_version", "handshake_failure", "insufficient_security" ->
                    peer + " found no TLS version or cipher suite in common with this side (" + words + ")";
            default -> peer + " aborted the handshake with the alert " + alert + " (its log says why; often it does not "
                    + "trust this side's certificate) (" + words + ")";
        };
    }

    /**
     * The reason, naming the cause (untrusted, expired, hostname mismatch, no client certificate, …) and ending with
     * the provider's own words.
     *
     * @param clientSide whether this side is the client (whose "peer" is the server)
     */
    static String describe(Throwable failure, boolean clientSide) {
        String peer = clientSide ? "the server's" : "the client's";
        StringBuilder all = new StringBuilder();
        String last = null;
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SslHandshakeTimeoutException) {
                return "the TLS handshake did not complete in time (" + t.getMessage() + ")";
            }
            if (t instanceof CertificateExpiredException) {
                return peer + " certificate has expired (" + t.getMessage() + ")";
            }
            if (t instanceof CertificateNotYetValidException) {
                return peer + " certificate is not yet valid (" + t.getMessage() + ")";
            }
            if (t instanceof CertPathValidatorException v && v.getReason() == CertPathValidatorException.BasicReason.EXPIRED) {
                return peer + " certificate has expired (" + t.getMessage() + ")";
            }
            if (t instanceof NotSslRecordException) {
                return "the peer sent data that is not TLS";
            }
            if (t.getMessage() != null) {
                last = t.getMessage();
                all.append(' ').append(last.toLowerCase(Locale.ROOT));
            }
        }
        String m = all.toString();
        String words = last == null ? failure.toString() : last;
        java.util.regex.Matcher alert = RECEIVED_ALERT.matcher(m);
        if (alert.find()) {
            return receivedAlert(alert.group(1), clientSide, words);
        }
        if (m.contains("expired") || m.contains("notafter")) {
            return peer + " certificate has expired (" + words + ")";
        }
        if (m.contains("no subject alternative") || m.contains("no name matching") || m.contains("hostname")) {
            return "the server's certificate does not name the host dialled: hostname verification failed (" + words + ")";
        }
        if (m.contains("signature check failed") || m.contains("signature does not match") || m.contains("invalid signature")) {
            return peer + " certificate's signature does not verify with its issuer's key: it names a trusted issuer but was "
                    + "signed by another key (" + words + ")";
        }
        if (m.contains("certificate_required") || m.contains("empty client certificate chain") || m.contains("null cert chain")
                || m.contains("peer_did_not_return_a_certificate") || m.contains("did not return a certificate")) {
            return clientSide ? "the server requires a client certificate it trusts, and this side sent none (" + words + ")"
                    : "the client sent no certificate (none, or none issued by a CA this server trusts), which this server "
                    + "requires (" + words + ")";
        }
        if (m.contains("unable to find valid certification path") || m.contains("pkix path building failed")
                || m.contains("no trusted certificate") || m.contains("unknown_ca") || m.contains("unknown ca")) {
            return peer + " certificate is not trusted: no chain to this side's trust roots (" + words + ")";
        }
        if (m.contains("bad_certificate") || m.contains("certificate_unknown") || m.contains("certificate_expired")) {
            return (clientSide ? "the server" : "the client") + " rejected this side's certificate (" + words + ")";
        }
        if (m.contains("no_application_protocol") || m.contains("application protocol")) {
            return "the peer does not speak " + TlsConfig.ALPN_PROTOCOL + " over TLS (ALPN: " + words + ")";
        }
        if (m.contains("closed") && m.contains("handshake")) {
            return "the peer closed the connection during the TLS handshake (" + words + ")";
        }
        return words;
    }
}
