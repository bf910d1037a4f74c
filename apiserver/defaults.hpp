// apiserver/defaults.hpp
//
// apply_defaults(): the defaults kube-apiserver fills into an object before it
// validates and stores it, whatever the verb (create, update, every patch type,
// server-side apply), so that what kubectl describe and get -o yaml show matches a
// real cluster (issue 32). admit() (apiserver/admission.hpp) calls it first.
//
// Contract (the documented defaults of Kubernetes 1.32; a field already set,
// including to a zero value such as replicas: 0, is never changed)
//   * Pod and every pod template (Deployment, ReplicaSet, StatefulSet, DaemonSet,
//     Job, CronJob's jobTemplate, ReplicationController): dnsPolicy ClusterFirst,
//     restartPolicy Always, schedulerName default-scheduler,
//     terminationGracePeriodSeconds 30, securityContext {}; each container and init
//     container: imagePullPolicy Always for a ":latest" or untagged image without a
//     digest, else IfNotPresent; terminationMessagePath /dev/termination-log,
//     terminationMessagePolicy File, ports' protocol TCP, probes' timeoutSeconds 1,
//     periodSeconds 10, successThreshold 1, failureThreshold 3, httpGet path / and
//     scheme HTTP, env fieldRef apiVersion v1; volumes without a source become
//     emptyDir {}, configMap / secret / projected / downwardAPI defaultMode 420.
//     A Pod (not a template) also gets enableServiceLinks true, resource requests
//     copied from limits where unset, and with hostNetwork hostPort = containerPort.
//   * Deployment: replicas 1, strategy RollingUpdate with maxUnavailable and
//     maxSurge 25%, revisionHistoryLimit 10, progressDeadlineSeconds 600.
//     ReplicaSet: replicas 1. ReplicationController: replicas 1, selector and labels
//     from the template's labels. StatefulSet: replicas 1, podManagementPolicy
//     OrderedReady, updateStrategy RollingUpdate with partition 0,
//     revisionHistoryLimit 10, persistentVolumeClaimRetentionPolicy Retain/Retain,
//     claim templates' volumeMode Filesystem. DaemonSet: updateStrategy RollingUpdate
//     with maxUnavailable 1 and maxSurge 0, revisionHistoryLimit 10.
//   * Job: parallelism 1 (and completions 1 when neither is set), backoffLimit 6,
//     completionMode NonIndexed, suspend false, podReplacementPolicy
//     TerminatingOrFailed (Failed with a podFailurePolicy). CronJob: concurrencyPolicy
//     Allow, suspend false, successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1.
//   * Service: type ClusterIP, sessionAffinity None (ClientIP: timeoutSeconds 10800),
//     ports' protocol TCP and targetPort = port, internalTrafficPolicy Cluster (not
//     for ExternalName), externalTrafficPolicy Cluster for NodePort and LoadBalancer,
//     allocateLoadBalancerNodePorts true for LoadBalancer. Endpoints: ports'
//     protocol TCP. Namespace: label kubernetes.io/metadata.name = its name.
//     PersistentVolumeClaim: volumeMode Filesystem. PersistentVolume: reclaim policy
//     Retain, volumeMode Filesystem.
//   * A custom resource: its CRD schema's `default:` values (schema_defaults.hpp).
//   * Not here (kube-apiserver does these outside defaulting, in allocators, admission
//     plugins and controllers): cluster IPs and node ports, a Pod's service account
//     and token volume, priority and tolerations, Job selectors, any status.
// Threading: pure functions of their arguments (the registry is thread-safe).
// Errors: none; a field of an unexpected JSON type is left alone for validation.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "apiserver/resources.hpp"

namespace kinformer::apiserver {

void apply_defaults(const ResourceRegistry& registry, const ResourceType& type, nlohmann::json& object);

/// The imagePullPolicy kube-apiserver gives a container of this image: "Always" for
/// ":latest" or no tag (and no digest), else "IfNotPresent".
const char* default_pull_policy(const std::string& image);

}  // namespace kinformer::apiserver
