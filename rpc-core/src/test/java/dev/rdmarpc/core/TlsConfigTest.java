package dev.rdmarpc.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The TLS configuration's rules and its file reloading, without any handshake (those are in integration-tests). */
class TlsConfigTest {
    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void clientDefaultsVerifyTheHostAndAllowTls13Then12() {
        TlsConfig c = TlsConfig.forClient().build();
        assertFalse(c.isServer());
        assertTrue(c.hostnameVerification());
        assertNull(c.authorityOverride());
        assertEquals(List.of("TLSv1.3", "TLSv1.2"), c.protocols());
        assertEquals(TlsConfig.ClientAuth.NONE, c.clientAuth());
        assertNull(c.material().trustRootsPem(), "no roots given: the JDK's default trust store");
    }

    @Test
    void settingsOfTheOtherSideOrOutOfRangeAreRefused() {
        assertThrows(IllegalStateException.class, () -> TlsConfig.forClient().clientAuth(TlsConfig.ClientAuth.REQUIRE));
        TlsConfig.Builder server = TlsConfig.forServer(new ByteArrayInputStream(ascii("c")), new ByteArrayInputStream(ascii("k")));
        assertThrows(IllegalStateException.class, () -> server.authorityOverride("x"));
        assertThrows(IllegalArgumentException.class, () -> TlsConfig.forClient().protocols("TLSv1.1"));
        assertThrows(IllegalArgumentException.class, () -> TlsConfig.forClient().protocols());
        assertThrows(IllegalStateException.class, () -> TlsConfig.forServer(new ByteArrayInputStream(ascii("c")),
                new ByteArrayInputStream(ascii("k"))).build().withAuthorityOverride("x"));
    }

    @Test
    void filesAreReadAgainOnlyWhenTheyChange(@TempDir Path dir) throws Exception {
        Path cert = Files.writeString(dir.resolve("c.pem"), "first chain");
        Path key = Files.writeString(dir.resolve("k.pem"), "first key");
        TlsConfig c = TlsConfig.forServer(cert, key).clientAuth(TlsConfig.ClientAuth.OPTIONAL).build();
        assertTrue(c.reloadsFromFiles());
        TlsConfig.Material first = c.material();
        assertArrayEquals(ascii("first chain"), first.certificateChainPem());
        assertSame(first, c.material(), "unchanged files: the same material");
        Files.writeString(cert, "second chain");
        Files.setLastModifiedTime(cert, FileTime.fromMillis(Files.getLastModifiedTime(cert).toMillis() + 60_000));
        TlsConfig.Material second = c.material();
        assertNotSame(first, second);
        assertArrayEquals(ascii("second chain"), second.certificateChainPem());
        Files.delete(key);
        UncheckedIOException e = assertThrows(UncheckedIOException.class, c::material);
        assertTrue(e.getMessage().contains("k.pem"), e.getMessage());
    }

    @Test
    void anAuthorityOverrideCopyKeepsEverythingElse() {
        TlsConfig c = TlsConfig.forClient().trustRoots(new ByteArrayInputStream(ascii("roots"))).hostnameVerification(true)
                .protocols("TLSv1.3").build();
        TlsConfig o = c.withAuthorityOverride("db1.example");
        assertEquals("db1.example", o.authorityOverride());
        assertEquals(List.of("TLSv1.3"), o.protocols());
        assertArrayEquals(ascii("roots"), o.material().trustRootsPem());
        assertFalse(o.reloadsFromFiles());
    }
}
