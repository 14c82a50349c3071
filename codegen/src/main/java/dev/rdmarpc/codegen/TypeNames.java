package dev.rdmarpc.codegen;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * How one generated file writes the classes it names. A class is written fully qualified, unless a name in scope of
 * the generated class (one of its own members, or a top-level class of its package such as a message named
 * {@code dev}, {@code java} or {@code com}) would obscure the first identifier of the qualified name: then it is
 * imported (an import declaration is outside the scope of those names) and written by its simple name. What can be
 * written neither way is a {@link CodeGenerationException}.
 */
final class TypeNames {
    private static final String CORE = "dev.rdmarpc.core";

    private final Set<String> members;
    private final Set<String> packageClasses;
    private final Map<String, String> imports = new TreeMap<>();
    private final Set<String> writtenFirstSegments = new HashSet<>();

    /**
     * @param members        the names the generated class declares: its own name, its nested classes, its fields,
     *                       parameters and local variables
     * @param packageClasses the top-level classes of the generated class's package
     */
    TypeNames(Set<String> members, Set<String> packageClasses) {
        this.members = Set.copyOf(members);
        this.packageClasses = Set.copyOf(packageClasses);
    }

    /** An rdmarpc class of {@code dev.rdmarpc.core} ({@code name} may be nested: {@code MethodDescriptor.MethodType}). */
    String core(String name) {
        return of(new JavaType(CORE, name));
    }

    /** A class of {@code java.lang}. */
    String lang(String name) {
        return of(new JavaType("java.lang", name));
    }

    /** A class of the JDK or of rdmarpc outside the core package, by package and name. */
    String of(String javaPackage, String name) {
        return of(new JavaType(javaPackage, name));
    }

    /** The way the generated file writes {@code type}. */
    String of(JavaType type) {
        String first = type.firstSegment();
        if (type.javaPackage().isEmpty()) {
            if (members.contains(first)) {
                throw new CodeGenerationException("the class " + type.name() + " is in the unnamed package, where the"
                        + " generated class's own " + first + " hides it, and a class of the unnamed package cannot be"
                        + " imported: set java_package (or java_outer_classname) in its .proto file");
            }
            writtenFirstSegments.add(first);
            return type.name();
        }
        if (!members.contains(first) && !packageClasses.contains(first)) {
            writtenFirstSegments.add(first);
            return type.qualified();
        }
        String simple = type.simpleName();
        if (members.contains(simple)) {
            throw new CodeGenerationException("the class " + type.qualified() + " can be written neither fully qualified"
                    + " (" + first + " names a class in scope) nor by its simple name (the generated class declares "
                    + simple + ")");
        }
        String previous = imports.putIfAbsent(simple, type.qualified());
        if (previous != null && !previous.equals(type.qualified())) {
            throw new CodeGenerationException("the classes " + previous + " and " + type.qualified() + " can be written"
                    + " neither fully qualified (" + first + " names a class in scope) nor both by their simple name");
        }
        return simple;
    }

    /**
     * The import declarations the file needs, sorted; called after the whole file is written.
     *
     * @throws CodeGenerationException if an imported simple name would obscure a name the file writes
     */
    List<String> importDeclarations() {
        List<String> lines = new ArrayList<>();
        for (Map.Entry<String, String> e : imports.entrySet()) {
            if (writtenFirstSegments.contains(e.getKey())) {
                throw new CodeGenerationException("the class " + e.getValue() + " must be imported, and its simple name"
                        + " would then hide the first identifier of another name the generated class writes");
            }
            lines.add("import " + e.getValue() + ";");
        }
        lines.sort(null);
        return lines;
    }
}
