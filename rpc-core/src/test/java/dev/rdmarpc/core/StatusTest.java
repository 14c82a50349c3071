package dev.rdmarpc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.net.URL;
import java.net.URLClassLoader;
import org.junit.jupiter.api.Test;

/** Status and its codes: numbers, constants, and class initialisation in either order. */
class StatusTest {

    @Test
    void codesKeepGrpcNumbersAndUnknownNumbersMapToUnknown() {
        assertEquals(0, Status.Code.OK.value());
        assertEquals(14, Status.Code.UNAVAILABLE.value());
        assertEquals(16, Status.Code.UNAUTHENTICATED.value());
        assertSame(Status.UNKNOWN, Status.fromCodeValue(99));
        assertSame(Status.DEADLINE_EXCEEDED, Status.Code.DEADLINE_EXCEEDED.toStatus());
    }

    @Test
    void theCodeEnumMayInitialiseBeforeStatus() throws Exception {
        assertInitialisesFirst("dev.rdmarpc.core.Status$Code");
    }

    @Test
    void statusMayInitialiseBeforeTheCodeEnum() throws Exception {
        assertInitialisesFirst("dev.rdmarpc.core.Status");
    }

    /** A fresh class loader so that {@code first} really is the first of the two to initialise. */
    private static void assertInitialisesFirst(String first) throws Exception {
        URL classes = Status.class.getProtectionDomain().getCodeSource().getLocation();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader())) {
            Class.forName(first, true, loader);
            Class<?> status = Class.forName("dev.rdmarpc.core.Status", true, loader);
            Class<?> code = Class.forName("dev.rdmarpc.core.Status$Code", true, loader);
            for (Object c : code.getEnumConstants()) {
                Object s = code.getMethod("toStatus").invoke(c);
                assertNotNull(s, () -> c + ".toStatus()");
                assertSame(c, status.getMethod("getCode").invoke(s));
            }
            Object ok = status.getField("OK").get(null);
            assertSame(code.getEnumConstants()[0], status.getMethod("getCode").invoke(ok));
        }
    }
}
