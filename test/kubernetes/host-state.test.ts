// The one-node cluster (scripts/kubernetes/) puts the host back as found: these are the pure parts of that and of
// the Kubernetes build, on listings as iptables, /proc/self/mountinfo and k8s.io/kubernetes's go.mod give them.
import { expect, test } from "bun:test";
import { pinStagingModules } from "../../scripts/kubernetes/binaries.ts";
import { chainRemovals, mountsUnder, splitRule } from "../../scripts/kubernetes/host-state.ts";

test("only kube-proxy's and the CNI plugins' chains are removed, after the rules of other chains that jump to them", () => {
  const listing = [
    "-P FORWARD DROP",
    "-N DOCKER",
    "-N DOCKER-USER",
    "-N KUBE-FORWARD",
    "-N KUBE-SERVICES",
    "-N CNI-FORWARD",
    '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    "-A FORWARD -j DOCKER-USER",
    '-A FORWARD -m comment --comment "CNI firewall plugin rules" -j CNI-FORWARD',
    "-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP",
    "-A CNI-FORWARD -j CNI-ADMIN",
  ].join("\n");
  expect(chainRemovals(listing)).toEqual([
    ["-D", "FORWARD", "-m", "comment", "--comment", "kubernetes forwarding rules", "-j", "KUBE-FORWARD"],
    [
      "-D",
      "FORWARD",
      "-m",
      "conntrack",
      "--ctstate",
      "NEW",
      "-m",
      "comment",
      "--comment",
      "kubernetes service portals",
      "-j",
      "KUBE-SERVICES",
    ],
    ["-D", "FORWARD", "-m", "comment", "--comment", "CNI firewall plugin rules", "-j", "CNI-FORWARD"],
    ["-F", "KUBE-FORWARD"],
    ["-F", "KUBE-SERVICES"],
    ["-F", "CNI-FORWARD"],
    ["-X", "KUBE-FORWARD"],
    ["-X", "KUBE-SERVICES"],
    ["-X", "CNI-FORWARD"],
  ]);
  expect(chainRemovals("-P INPUT ACCEPT\n-N DOCKER\n-A FORWARD -j DOCKER\n")).toEqual([]);
  expect(splitRule('-s 10.244.0.5/32 -m comment --comment "name: \\"pss-k8s\\" id: \\"abc\\"" -j CNI-1')).toEqual([
    "-s",
    "10.244.0.5/32",
    "-m",
    "comment",
    "--comment",
    'name: "pss-k8s" id: "abc"',
    "-j",
    "CNI-1",
  ]);
});

test("the mounts under the cluster's directories are found deepest first, and nothing outside them", () => {
  const mountinfo = [
    "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
    "90 22 0:50 / /work/wt/k8s/.data/kubernetes/cluster/kubelet/pods/abc/volumes/kubernetes.io~empty-dir/tmp rw - tmpfs tmpfs rw",
    "91 22 0:51 / /run/pss-k8s/containerd/io.containerd.runtime.v2.task/k8s.io/x/rootfs rw - overlay overlay rw",
    "92 22 0:52 / /work/wt/k8s/.data/kubernetes/cluster rw - tmpfs tmpfs rw",
    "93 22 0:53 / /work/wt/k8s/.data/kubernetes/cluster-other rw - tmpfs tmpfs rw",
    "94 22 0:54 / /var/lib/docker/overlay2/y/merged rw - overlay overlay rw",
  ].join("\n");
  expect(mountsUnder(["/work/wt/k8s/.data/kubernetes/cluster", "/run/pss-k8s/containerd"], mountinfo)).toEqual([
    "/work/wt/k8s/.data/kubernetes/cluster/kubelet/pods/abc/volumes/kubernetes.io~empty-dir/tmp",
    "/run/pss-k8s/containerd/io.containerd.runtime.v2.task/k8s.io/x/rootfs",
    "/work/wt/k8s/.data/kubernetes/cluster",
  ]);
});

test("k8s.io/kubernetes builds as a module: its staging replaces go and the staging modules are the release's published ones", () => {
  const goMod = [
    "module k8s.io/kubernetes",
    "require (",
    "\tgithub.com/blang/semver/v4 v4.0.0",
    "\tk8s.io/api v0.0.0",
    "\tk8s.io/client-go v0.0.0",
    "\tk8s.io/utils v0.0.0-20250604170112-4c0f3b243397",
    ")",
    "replace (",
    "\tk8s.io/api => ./staging/src/k8s.io/api",
    "\tk8s.io/client-go => ./staging/src/k8s.io/client-go",
    ")",
    "",
  ].join("\n");
  const pinned = pinStagingModules(goMod, "v1.34.2");
  expect(pinned).toContain("\tk8s.io/api v0.34.2\n");
  expect(pinned).toContain("\tk8s.io/client-go v0.34.2\n");
  expect(pinned).toContain("\tk8s.io/utils v0.0.0-20250604170112-4c0f3b243397\n");
  expect(pinned).not.toContain("./staging");
});
