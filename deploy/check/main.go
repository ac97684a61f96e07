// Command check reads Kubernetes manifests (YAML, several documents per file) and fails when one
// would not be accepted as written: each document is decoded strictly into the official API type
// of its apiVersion and kind (an unknown or misspelt field, a value of the wrong type, an unknown
// kind are errors), then checked for what Portico's deployment relies on. It stands in for
// kubeconform, whose schemas cannot be downloaded here; the types are the API server's own.
//
//	go run ./deploy/check deploy/kubernetes/*.yaml
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: check FILE.yaml...")
		os.Exit(2)
	}
	problems := 0
	for _, file := range os.Args[1:] {
		for _, problem := range checkFile(file) {
			fmt.Fprintln(os.Stderr, problem)
			problems++
		}
	}
	if problems > 0 {
		fmt.Fprintf(os.Stderr, "%d problems\n", problems)
		os.Exit(1)
	}
	fmt.Println("manifests valid")
}

func checkFile(file string) []string {
	text, err := os.ReadFile(file)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", file, err)}
	}
	var problems []string
	for i, document := range splitDocuments(text) {
		where := fmt.Sprintf("%s: document %d", file, i+1)
		for _, problem := range checkDocument(document) {
			problems = append(problems, where+": "+problem)
		}
	}
	return problems
}

// splitDocuments cuts a YAML stream at its `---` lines, leaving out documents with no content.
func splitDocuments(text []byte) [][]byte {
	var documents [][]byte
	for _, part := range bytes.Split(append([]byte("\n"), text...), []byte("\n---")) {
		if len(strings.TrimSpace(stripComments(string(part)))) > 0 {
			documents = append(documents, part)
		}
	}
	return documents
}

func stripComments(text string) string {
	var kept []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

func checkDocument(document []byte) []string {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(document, &head); err != nil {
		return []string{err.Error()}
	}
	switch head.APIVersion + "/" + head.Kind {
	case "v1/ConfigMap":
		var object corev1.ConfigMap
		return strict(document, &object, func() []string { return named(object.Name) })
	case "v1/Service":
		var object corev1.Service
		return strict(document, &object, func() []string { return checkService(&object) })
	case "apps/v1/Deployment":
		var object appsv1.Deployment
		return strict(document, &object, func() []string { return checkDeployment(&object) })
	case "policy/v1/PodDisruptionBudget":
		var object policyv1.PodDisruptionBudget
		return strict(document, &object, func() []string { return named(object.Name) })
	default:
		return []string{fmt.Sprintf("unknown apiVersion and kind %q %q", head.APIVersion, head.Kind)}
	}
}

// strict decodes the document into object, refusing fields the type does not have, then runs checks.
func strict(document []byte, object any, checks func() []string) []string {
	if err := yaml.UnmarshalStrict(document, object); err != nil {
		return []string{err.Error()}
	}
	return checks()
}

func named(name string) []string {
	if name == "" {
		return []string{"metadata.name is required"}
	}
	return nil
}

func checkService(service *corev1.Service) []string {
	problems := named(service.Name)
	if len(service.Spec.Selector) == 0 {
		problems = append(problems, "spec.selector is empty: the Service would select no pod")
	}
	return problems
}

// checkDeployment: a selector that matches the pod template, and for each container an image,
// readiness and liveness probes, a memory limit and a non-root, read-only security context.
func checkDeployment(deployment *appsv1.Deployment) []string {
	problems := named(deployment.Name)
	spec := deployment.Spec
	if spec.Selector == nil || len(spec.Selector.MatchLabels) == 0 {
		problems = append(problems, "spec.selector.matchLabels is required")
	} else if !labels.SelectorFromSet(spec.Selector.MatchLabels).Matches(labels.Set(spec.Template.Labels)) {
		problems = append(problems, "spec.selector does not match spec.template.metadata.labels")
	}
	pod := spec.Template.Spec
	nonRoot := pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot
	if len(pod.Containers) == 0 {
		problems = append(problems, "spec.template.spec.containers is empty")
	}
	for _, container := range pod.Containers {
		at := fmt.Sprintf("container %q: ", container.Name)
		if container.Image == "" {
			problems = append(problems, at+"image is required")
		}
		if container.ReadinessProbe == nil {
			problems = append(problems, at+"readinessProbe is required")
		}
		if container.LivenessProbe == nil {
			problems = append(problems, at+"livenessProbe is required")
		}
		if _, ok := container.Resources.Limits[corev1.ResourceMemory]; !ok {
			problems = append(problems, at+"resources.limits.memory is required")
		}
		security := container.SecurityContext
		if security == nil || security.ReadOnlyRootFilesystem == nil || !*security.ReadOnlyRootFilesystem {
			problems = append(problems, at+"securityContext.readOnlyRootFilesystem must be true")
		}
		if security == nil || security.AllowPrivilegeEscalation == nil || *security.AllowPrivilegeEscalation {
			problems = append(problems, at+"securityContext.allowPrivilegeEscalation must be false")
		}
		if !nonRoot && (security == nil || security.RunAsNonRoot == nil || !*security.RunAsNonRoot) {
			problems = append(problems, at+"runAsNonRoot must be true (pod or container)")
		}
	}
	return problems
}
