package dev.sluice.test;

import java.util.Map;
import java.util.Set;
import org.springframework.boot.context.annotation.DeterminableImports;
import org.springframework.context.annotation.ImportSelector;
import org.springframework.core.type.AnnotationMetadata;

/**
 * What {@link AutoConfigureSluiceTest} imports, by its {@code store}: the same classes for the
 * same setting, so that test classes alike share one cached application context.
 */
final class SluiceTestImports implements ImportSelector, DeterminableImports {

    @Override
    public String[] selectImports(AnnotationMetadata metadata) {
        return imports(metadata).toArray(String[]::new);
    }

    @Override
    public Set<Object> determineImports(AnnotationMetadata metadata) {
        return Set.copyOf(imports(metadata));
    }

    private static Set<String> imports(AnnotationMetadata metadata) {
        Map<String, Object> attributes = metadata.getAnnotationAttributes(AutoConfigureSluiceTest.class.getName());
        Object store = attributes == null ? AutoConfigureSluiceTest.Store.IN_MEMORY : attributes.get("store");
        return Set.of(SluiceTestConfiguration.class.getName(), store == AutoConfigureSluiceTest.Store.CONFIGURED
                ? TestKeyPrefix.class.getName() : InMemoryTestStore.class.getName());
    }
}
