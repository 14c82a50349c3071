package dev.rdmarpc.core.testing;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test during which a {@link LockCheck} found a lock rule broken, wherever the check ran (a callback's thread
 * may swallow the failure it threw). Registered for every test of the modules that enable JUnit's extension
 * autodetection (the build does, in the parent pom's surefire configuration).
 */
public final class LockCheckExtension implements AfterEachCallback {
    @Override
    public void afterEach(ExtensionContext context) {
        LockCheck.assertNoneRecorded();
    }
}
