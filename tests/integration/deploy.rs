//! The deploy files (`Dockerfile`, `deploy/`) against the binary, so they cannot drift apart:
//! every YAML file parses; every `EGSOLVE_*` name is one `egsolve --help` documents; each
//! file's settings resolve to a valid `egsolve serve` configuration through the real flag
//! parser; ports, data paths, tokens paths, grace periods and command lines agree with it;
//! the probe paths answer 200 on a running server; `egsolve healthcheck` exits 0 against a
//! running server and non-zero against none. There is no Docker engine here: these are the
//! checks that can run without one.

use crate::packaging_support;

use std::collections::{BTreeMap, BTreeSet};

use packaging_support::deploy_files::*;
use packaging_support::{Server, egsolve, free_port, http, repo_file, repo_root};

/// The Dockerfile's `ENV` settings (the image's defaults).
fn dockerfile_env() -> BTreeMap<String, String> {
    let instructions = dockerfile_instructions(&repo_file("Dockerfile"));
    let env: Vec<&str> = instructions
        .iter()
        .filter(|(k, _)| k == "ENV")
        .flat_map(|(_, rest)| rest.split_whitespace())
        .collect();
    key_values(env.into_iter())
}

/// Every Kubernetes object of `deploy/kubernetes`, by kind.
fn kubernetes_objects() -> BTreeMap<String, Vec<serde_json::Value>> {
    let mut objects: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for path in deploy_files()
        .iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("kubernetes")))
    {
        for document in yaml_documents(path) {
            let kind = document["kind"].as_str().expect("every object has a kind");
            objects.entry(kind.to_string()).or_default().push(document);
        }
    }
    objects
}

fn only<'a>(
    objects: &'a BTreeMap<String, Vec<serde_json::Value>>,
    kind: &str,
) -> &'a serde_json::Value {
    let list = objects
        .get(kind)
        .unwrap_or_else(|| panic!("no {kind} in deploy/kubernetes"));
    assert_eq!(list.len(), 1, "one {kind} expected");
    &list[0]
}

#[test]
fn every_yaml_file_in_deploy_parses() {
    let yaml: Vec<_> = deploy_files()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    assert!(
        yaml.len() >= 6,
        "compose and Kubernetes files expected: {yaml:?}"
    );
    for path in &yaml {
        let documents = yaml_documents(path);
        assert!(!documents.is_empty(), "{} is empty", path.display());
        for document in documents {
            assert!(
                document.is_object(),
                "{}: a mapping expected",
                path.display()
            );
        }
    }
}

#[test]
fn every_egsolve_name_in_the_deploy_files_and_docs_is_one_the_binary_accepts() {
    let accepted = accepted_env_names();
    let mut texts: Vec<(String, String)> = deploy_files()
        .iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(p).expect("read"),
            )
        })
        .collect();
    texts.push(("Dockerfile".into(), repo_file("Dockerfile")));
    texts.push(("docs/deploy.md".into(), repo_file("docs/deploy.md")));
    let mut used = BTreeSet::new();
    for (origin, text) in &texts {
        for name in egsolve_names_in(text) {
            assert!(
                accepted.contains(&name),
                "{origin} uses {name}, which egsolve does not read (it reads {accepted:?})"
            );
            used.insert(name);
        }
    }
    for required in [
        "EGSOLVE_BIND",
        "EGSOLVE_DATA_DIR",
        "EGSOLVE_TOKENS_FILE",
        "EGSOLVE_AUTH",
    ] {
        assert!(used.contains(required), "no deploy file sets {required}");
    }
}

#[test]
fn dockerfile_matches_the_binary() {
    let text = repo_file("Dockerfile");
    let instructions = dockerfile_instructions(&text);
    let all = |keyword: &str| -> Vec<String> {
        instructions
            .iter()
            .filter(|(k, _)| k == keyword)
            .map(|(_, rest)| rest.clone())
            .collect()
    };
    let config = resolve_env("Dockerfile ENV", &dockerfile_env());
    assert_eq!(
        all("EXPOSE"),
        vec![config.bind.port().to_string()],
        "EXPOSE is the bound port"
    );
    // The image's default tokens path is where the documented `docker run` mounts the file.
    let tokens = config.tokens_file.clone().expect("auth on: a tokens file");
    let mount = format!(":{}:ro", tokens.display());
    assert!(
        text.contains(&mount),
        "the Dockerfile's usage mounts tokens at {mount}"
    );
    assert!(
        repo_file("docs/deploy.md").contains(&mount),
        "docs/deploy.md mounts {mount}"
    );
    let volumes: Vec<String> = all("VOLUME")
        .iter()
        .flat_map(|v| strings(&serde_json::from_str(v).expect("VOLUME as JSON")))
        .collect();
    assert_eq!(volumes, vec![config.data_dir.display().to_string()]);
    let healthcheck = all("HEALTHCHECK").concat();
    let probe = healthcheck.split_once("CMD ").expect("HEALTHCHECK CMD").1;
    let probe = strings(&serde_json::from_str(probe).expect("HEALTHCHECK CMD as JSON"));
    assert_eq!(
        probe,
        ["egsolve", "healthcheck"],
        "the health check is the binary's own"
    );
    assert_command_line_accepted("Dockerfile HEALTHCHECK", &probe[1..]);
    let entrypoint = strings(&serde_json::from_str(&all("ENTRYPOINT").concat()).expect("JSON"));
    let cmd = strings(&serde_json::from_str(&all("CMD").concat()).expect("JSON"));
    assert_eq!(entrypoint, ["egsolve"]);
    assert_eq!(cmd.first().map(String::as_str), Some("serve"));
    assert_command_line_accepted("Dockerfile CMD", &cmd);
    assert_eq!(all("STOPSIGNAL"), ["SIGTERM"]);
    let user = all("USER").concat();
    assert!(!user.is_empty() && !user.starts_with("root") && !user.starts_with('0'));
    assert!(text.contains("cargo build --release --locked"));

    // The runtime image's CUDA major version is the one the bindings load (`cuda-13000`
    // needs libnvrtc.so.13).
    let cargo = repo_file("Cargo.toml");
    let feature = cargo
        .split("\"cuda-")
        .nth(1)
        .expect("a cudarc cuda-NNNNN feature");
    let bindings_major: u32 = feature[..feature.find('"').unwrap()]
        .parse::<u32>()
        .unwrap()
        / 1000;
    let cuda_arg = all("ARG")
        .into_iter()
        .find_map(|a| a.strip_prefix("CUDA_VERSION=").map(str::to_string))
        .expect("ARG CUDA_VERSION=");
    assert_eq!(
        cuda_arg.split('.').next(),
        Some(bindings_major.to_string().as_str())
    );
    let runtime = all("FROM")
        .into_iter()
        .find(|f| f.starts_with("nvidia/cuda:"))
        .expect("a runtime stage FROM nvidia/cuda");
    assert!(
        runtime.contains("-runtime-"),
        "the CUDA runtime image (it has libnvrtc): {runtime}"
    );

    let ignore = repo_file(".dockerignore");
    for entry in ["target/", ".git/", "**/tokens"] {
        assert!(
            ignore.lines().any(|l| l.trim() == entry),
            ".dockerignore lacks {entry}"
        );
    }
}

#[test]
fn compose_matches_the_binary() {
    let path = repo_root().join("deploy/docker-compose.yml");
    let compose = yaml_documents(&path).remove(0);
    let service = &compose["services"]["egsolve"];
    let mut env = dockerfile_env();
    for (name, value) in service["environment"].as_object().expect("environment map") {
        let value = value
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| value.to_string());
        env.insert(name.clone(), value);
    }
    let config = resolve_env("docker-compose.yml", &env);
    let ports = strings(&service["ports"]);
    let container_port = ports[0]
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/tcp");
    assert_eq!(
        container_port,
        config.bind.port().to_string(),
        "the published container port is the bound port"
    );
    let volumes = strings(&service["volumes"]);
    let (volume, target) = volumes[0].split_once(':').expect("NAME:PATH");
    assert_eq!(
        target,
        config.data_dir.display().to_string(),
        "the volume holds the data dir"
    );
    assert!(
        compose["volumes"].get(volume).is_some(),
        "named volume {volume} declared"
    );
    let secret = &service["secrets"][0];
    let name = secret["source"].as_str().expect("secret source");
    let mounted = format!("/run/secrets/{}", secret["target"].as_str().unwrap_or(name));
    assert_eq!(
        Some(mounted.into()),
        config.tokens_file,
        "tokens file is the mounted secret"
    );
    assert!(
        compose["secrets"][name]["file"].is_string(),
        "secret {name} from a file"
    );
    let device = &service["deploy"]["resources"]["reservations"]["devices"][0];
    assert_eq!(device["driver"], "nvidia");
    assert!(strings(&device["capabilities"]).contains(&"gpu".to_string()));
    assert_eq!(
        strings(&service["healthcheck"]["test"]),
        ["CMD", "egsolve", "healthcheck"]
    );
    assert_command_line_accepted("compose command", &strings(&service["command"]));
    assert_eq!(service["stop_signal"], "SIGTERM");
    let grace = seconds(
        service["stop_grace_period"]
            .as_str()
            .expect("stop_grace_period"),
    );
    assert!(
        grace >= min_platform_grace_secs(&config),
        "stop_grace_period {grace} s must exceed EGSOLVE_SHUTDOWN_GRACE_SECS = {} by 10 s",
        config.shutdown_grace_secs
    );
    assert!(service["restart"].is_string());
}

#[test]
fn kubernetes_matches_the_binary() {
    let objects = kubernetes_objects();
    let kustomization = yaml_documents(&repo_root().join("deploy/kubernetes/kustomization.yaml"));
    let listed: BTreeSet<String> = strings(&kustomization[0]["resources"])
        .into_iter()
        .collect();
    let present: BTreeSet<String> = deploy_files()
        .iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("kubernetes")))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "kustomization.yaml")
        .collect();
    assert_eq!(listed, present, "kustomization.yaml lists every manifest");

    let set = only(&objects, "StatefulSet");
    assert_eq!(set["spec"]["replicas"], 1, "one pod owns the SQLite store");
    let pod = &set["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let config_map = only(&objects, "ConfigMap");
    assert_eq!(
        container["envFrom"][0]["configMapRef"]["name"],
        config_map["metadata"]["name"]
    );
    let mut env = dockerfile_env();
    for (name, value) in config_map["data"].as_object().expect("data") {
        env.insert(
            name.clone(),
            value.as_str().expect("string values").to_string(),
        );
    }
    for var in container["env"].as_array().into_iter().flatten() {
        env.insert(
            var["name"].as_str().unwrap().into(),
            var["value"].as_str().unwrap().into(),
        );
    }
    let config = resolve_env("deploy/kubernetes", &env);
    assert_command_line_accepted("StatefulSet args", &strings(&container["args"]));

    let port = &container["ports"][0];
    assert_eq!(
        port["containerPort"],
        config.bind.port(),
        "containerPort is the bound port"
    );
    let port_name = port["name"].as_str().expect("a named port");
    for (probe, path) in [
        ("startupProbe", "/healthz"),
        ("livenessProbe", "/healthz"),
        ("readinessProbe", "/readyz"),
    ] {
        let get = &container[probe]["httpGet"];
        assert_eq!(get["path"], path, "{probe}");
        assert!(
            get["port"] == port_name || get["port"] == config.bind.port(),
            "{probe} port"
        );
    }
    let service = only(&objects, "Service");
    let target = &service["spec"]["ports"][0]["targetPort"];
    assert!(
        *target == port_name || *target == config.bind.port(),
        "Service targetPort"
    );
    for (key, value) in service["spec"]["selector"].as_object().expect("selector") {
        assert_eq!(
            &set["spec"]["template"]["metadata"]["labels"][key], value,
            "selector {key}"
        );
    }
    assert_eq!(set["spec"]["serviceName"], service["metadata"]["name"]);

    let mounts = container["volumeMounts"].as_array().expect("volumeMounts");
    let claim = set["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
        .as_str()
        .unwrap();
    let data = mounts
        .iter()
        .find(|m| m["name"] == claim)
        .expect("the PVC is mounted");
    assert_eq!(
        data["mountPath"],
        config.data_dir.display().to_string(),
        "the PVC holds the data dir"
    );
    let secret = only(&objects, "Secret");
    let volume = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["secret"]["secretName"] == secret["metadata"]["name"])
        .expect("a volume from the tokens Secret");
    let mount = mounts
        .iter()
        .find(|m| m["name"] == volume["name"])
        .expect("mounted");
    assert_eq!(mount["readOnly"], true);
    let key = secret["stringData"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let tokens = format!("{}/{key}", mount["mountPath"].as_str().unwrap());
    assert_eq!(
        Some(tokens.into()),
        config.tokens_file,
        "tokens file is the Secret's key"
    );

    assert_eq!(container["resources"]["limits"]["nvidia.com/gpu"], 1);
    assert!(pod["nodeSelector"].is_object() && pod["tolerations"].is_array());
    let grace = pod["terminationGracePeriodSeconds"]
        .as_u64()
        .expect("grace period");
    assert!(
        grace >= min_platform_grace_secs(&config),
        "terminationGracePeriodSeconds {grace} must exceed EGSOLVE_SHUTDOWN_GRACE_SECS = {} by 10 s",
        config.shutdown_grace_secs
    );
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
}

/// The compose profile `cluster`: PostgreSQL, one API process that runs no jobs, two
/// workers; every setting resolves through the binary's own parser.
#[test]
fn compose_cluster_profile_matches_the_binary() {
    let path = repo_root().join("deploy/docker-compose.yml");
    let compose = yaml_documents(&path).remove(0);
    let services = compose["services"].as_object().expect("services");
    let in_cluster: BTreeSet<&str> = services
        .iter()
        .filter(|(_, s)| {
            s["profiles"]
                .as_array()
                .is_some_and(|p| p.contains(&"cluster".into()))
        })
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        in_cluster,
        BTreeSet::from(["postgres", "egsolve-api", "egsolve-worker"])
    );
    assert!(
        services["egsolve"].get("profiles").is_none(),
        "the single-host service stays the default"
    );
    let environment = |service: &serde_json::Value| -> BTreeMap<String, String> {
        let mut env = dockerfile_env();
        for (name, value) in service["environment"].as_object().expect("environment map") {
            env.insert(
                name.clone(),
                value.as_str().expect("string values").to_string(),
            );
        }
        env
    };
    let database_url = |env: &BTreeMap<String, String>| {
        let url = env
            .get("EGSOLVE_DATABASE")
            .expect("EGSOLVE_DATABASE")
            .clone();
        assert!(url.starts_with("postgres://egsolve:"), "{url}");
        assert!(
            url.ends_with("@postgres:5432/egsolve"),
            "the postgres service: {url}"
        );
        url
    };
    let postgres = &services["postgres"];
    assert!(
        strings(&postgres["healthcheck"]["test"])
            .concat()
            .contains("pg_isready")
    );
    assert_eq!(postgres["environment"]["POSTGRES_DB"], "egsolve");

    let api = &services["egsolve-api"];
    let command = strings(&api["command"]);
    assert_eq!(command, ["serve", "--no-worker"]);
    assert_command_line_accepted("compose egsolve-api command", &command);
    let env = environment(api);
    let api_url = database_url(&env);
    let mut with_flags = env.clone();
    with_flags.insert("EGSOLVE_NO_WORKER".into(), "true".into());
    let config = resolve_env("compose egsolve-api", &with_flags);
    assert!(config.is_shared() && config.no_worker);
    let port = strings(&api["ports"])[0]
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(port, config.bind.port().to_string());
    assert_eq!(
        api["depends_on"]["postgres"]["condition"],
        "service_healthy"
    );
    let grace = seconds(
        api["stop_grace_period"]
            .as_str()
            .expect("stop_grace_period"),
    );
    assert!(grace >= min_platform_grace_secs(&config));

    let worker = &services["egsolve-worker"];
    let command = strings(&worker["command"]);
    assert_eq!(command, ["worker"]);
    assert_command_line_accepted("compose egsolve-worker command", &command);
    let env = environment(worker);
    assert_eq!(database_url(&env), api_url, "one queue");
    let config = resolve_worker_env("compose egsolve-worker", &env);
    assert!(config.is_shared() && !config.no_worker);
    assert_eq!(worker["deploy"]["replicas"], 2);
    assert_eq!(
        worker["healthcheck"]["disable"], true,
        "a worker serves no HTTP: the image's health check cannot pass"
    );
    assert!(worker.get("ports").is_none());
    assert_eq!(
        worker["depends_on"]["postgres"]["condition"],
        "service_healthy"
    );
}

/// `deploy/kubernetes/cluster`: an API Deployment that runs no jobs behind the Service, a
/// scalable GPU worker Deployment, the database connection from the CloudNativePG cluster's
/// Secret, no hand-made database StatefulSet.
#[test]
fn kubernetes_cluster_matches_the_binary() {
    let dir = repo_root().join("deploy/kubernetes/cluster");
    let kustomization = yaml_documents(&dir.join("kustomization.yaml"));
    let listed: BTreeSet<String> = strings(&kustomization[0]["resources"])
        .into_iter()
        .collect();
    let mut objects: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    let mut present = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "kustomization.yaml" {
            continue;
        }
        present.insert(name);
        for document in yaml_documents(&path) {
            let kind = document["kind"].as_str().expect("a kind").to_string();
            objects.entry(kind).or_default().push(document);
        }
    }
    assert_eq!(listed, present, "kustomization.yaml lists every manifest");
    assert!(
        !objects.contains_key("StatefulSet"),
        "no hand-made database"
    );
    let database = &objects["Cluster"][0];
    assert_eq!(database["apiVersion"], "postgresql.cnpg.io/v1");
    let app_secret = format!("{}-app", database["metadata"]["name"].as_str().unwrap());

    let config_map = &objects["ConfigMap"][0];
    let deployment = |component: &str| -> serde_json::Value {
        objects["Deployment"]
            .iter()
            .find(|d| {
                d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
                    == component
            })
            .unwrap_or_else(|| panic!("a {component} Deployment"))
            .clone()
    };
    let env_of = |container: &serde_json::Value| -> BTreeMap<String, String> {
        assert_eq!(
            container["envFrom"][0]["configMapRef"]["name"],
            config_map["metadata"]["name"]
        );
        let mut env = dockerfile_env();
        for (name, value) in config_map["data"].as_object().unwrap() {
            env.insert(name.clone(), value.as_str().unwrap().to_string());
        }
        let mut from_secret = false;
        for var in container["env"].as_array().into_iter().flatten() {
            let name = var["name"].as_str().unwrap().to_string();
            if let Some(value) = var["value"].as_str() {
                env.insert(name, value.to_string());
            } else if name == "EGSOLVE_DATABASE" {
                let key = &var["valueFrom"]["secretKeyRef"];
                assert_eq!(key["name"], app_secret.as_str(), "the operator's Secret");
                assert_eq!(key["key"], "uri");
                from_secret = true;
                // What the operator puts there.
                env.insert(
                    name,
                    "postgresql://egsolve:secret@egsolve-db-rw:5432/egsolve".into(),
                );
            }
        }
        assert!(
            from_secret,
            "EGSOLVE_DATABASE comes from the database Secret"
        );
        env
    };

    let api = deployment("api");
    let container = &api["spec"]["template"]["spec"]["containers"][0];
    let args = strings(&container["args"]);
    assert_eq!(args, ["serve", "--no-worker"]);
    assert_command_line_accepted("api Deployment args", &args);
    let mut env = env_of(container);
    env.insert("EGSOLVE_NO_WORKER".into(), "true".into());
    let config = resolve_env("deploy/kubernetes/cluster api", &env);
    assert!(config.no_worker && config.is_shared());
    assert_eq!(container["ports"][0]["containerPort"], config.bind.port());
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    let service = &objects["Service"][0];
    for (key, value) in service["spec"]["selector"].as_object().unwrap() {
        assert_eq!(
            &api["spec"]["template"]["metadata"]["labels"][key], value,
            "{key}"
        );
    }
    let pod = &api["spec"]["template"]["spec"];
    assert!(
        pod["terminationGracePeriodSeconds"].as_u64().unwrap() >= min_platform_grace_secs(&config)
    );

    let worker = deployment("worker");
    let pod = &worker["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let args = strings(&container["args"]);
    assert_eq!(args, ["worker"]);
    assert_command_line_accepted("worker Deployment args", &args);
    let config = resolve_worker_env("deploy/kubernetes/cluster worker", &env_of(container));
    assert!(config.is_shared());
    assert!(worker["spec"]["replicas"].as_u64().unwrap() >= 2);
    assert_eq!(container["resources"]["limits"]["nvidia.com/gpu"], 1);
    assert!(container.get("ports").is_none(), "a worker serves no HTTP");
    for (key, value) in service["spec"]["selector"].as_object().unwrap() {
        if worker["spec"]["template"]["metadata"]["labels"][key] != *value {
            return; // the Service does not select workers
        }
    }
    panic!("the Service selects the worker pods");
}

#[test]
fn systemd_unit_matches_the_binary() {
    let unit = systemd_unit(&repo_file("deploy/systemd/egsolve.service"));
    let one = |key: &str| -> String {
        let values = unit
            .get(&("Service".to_string(), key.to_string()))
            .unwrap_or_else(|| panic!("[Service] {key}= missing"));
        values.last().unwrap().clone()
    };
    let exec: Vec<String> = one("ExecStart")
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(exec[0], "/usr/local/bin/egsolve");
    assert_eq!(exec.get(1).map(String::as_str), Some("serve"));
    assert_command_line_accepted("ExecStart", &exec[1..]);
    assert_eq!(one("EnvironmentFile"), "/etc/egsolve/egsolve.env");
    let env_text = repo_file("deploy/systemd/egsolve.env");
    let env = key_values(
        env_text
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with('#') && !l.is_empty()),
    );
    let config = resolve_env("deploy/systemd/egsolve.env", &env);
    let state = one("StateDirectory");
    assert_eq!(
        config.data_dir,
        std::path::Path::new("/var/lib").join(&state)
    );
    assert_eq!(one("KillSignal"), "SIGTERM");
    let grace = seconds(&one("TimeoutStopSec"));
    assert!(
        grace >= min_platform_grace_secs(&config),
        "TimeoutStopSec {grace} s must exceed EGSOLVE_SHUTDOWN_GRACE_SECS = {} by 10 s",
        config.shutdown_grace_secs
    );
    for (key, value) in [
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
    ] {
        assert_eq!(one(key), value, "{key}");
    }
    assert!(!one("User").is_empty() && one("User") != "root");
    let hides_gpus = |key: &str, bad: &[&str]| {
        unit.get(&("Service".to_string(), key.to_string()))
            .is_some_and(|v| v.iter().any(|v| bad.contains(&v.as_str())))
    };
    assert!(
        !hides_gpus("PrivateDevices", &["yes", "true", "1", "on"]),
        "hides /dev/nvidia*"
    );
    assert!(
        !hides_gpus("DevicePolicy", &["closed", "strict"]),
        "hides /dev/nvidia*"
    );
}

#[test]
fn the_deploy_guide_names_only_files_that_exist() {
    let guide = repo_file("docs/deploy.md");
    for section in ["Docker Compose", "Kubernetes", "systemd"] {
        assert!(
            guide.contains(&format!("## {section}")),
            "docs/deploy.md: ## {section}"
        );
    }
    let mut named = 0;
    for piece in guide.split("deploy/").skip(1) {
        let path: String = piece
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "._-/".contains(*c))
            .collect();
        let path = path.trim_end_matches(['.', '/']);
        // Files the reader makes: the tokens file and Compose's `.env` (git-ignored).
        if path.is_empty()
            || path == "tokens"
            || path == ".env"
            || path.starts_with("kubernetes/tokens")
        {
            continue;
        }
        assert!(
            repo_root().join("deploy").join(path).exists(),
            "docs/deploy.md names deploy/{path}"
        );
        named += 1;
    }
    assert!(named >= 3, "the guide points at the deploy files");
}

#[test]
fn healthcheck_exits_zero_against_a_running_server_and_non_zero_against_none() {
    let nobody = format!("http://127.0.0.1:{}", free_port());
    let status = egsolve()
        .args(["healthcheck", "--server", &nobody])
        .status()
        .unwrap();
    assert!(
        !status.success(),
        "healthcheck passes with no server at {nobody}"
    );

    let data = tempfile::tempdir().unwrap();
    let mut server = Server::start(data.path(), &[]);
    let status = egsolve()
        .args(["healthcheck", "--server", &server.url()])
        .status()
        .unwrap();
    assert!(
        status.success(),
        "healthcheck fails against a running server"
    );
    // As in the image: the URL comes from EGSOLVE_SERVER.
    let status = egsolve()
        .arg("healthcheck")
        .env("EGSOLVE_SERVER", server.url())
        .status()
        .unwrap();
    assert!(status.success(), "healthcheck ignores EGSOLVE_SERVER");

    server.sigterm();
    server
        .wait_exit(std::time::Duration::from_secs(15))
        .expect("exits on SIGTERM");
    let status = egsolve()
        .args(["healthcheck", "--server", &server.url()])
        .status()
        .unwrap();
    assert!(
        !status.success(),
        "healthcheck passes after the server stopped"
    );
}

#[test]
fn probe_paths_answer_200_with_auth_on_and_the_shipped_secret() {
    let objects = kubernetes_objects();
    let container = &only(&objects, "StatefulSet")["spec"]["template"]["spec"]["containers"][0];
    let mut paths = BTreeSet::from(["/healthz".to_string()]);
    for probe in ["startupProbe", "livenessProbe", "readinessProbe"] {
        paths.insert(
            container[probe]["httpGet"]["path"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    // The shipped Secret's tokens file (no tokens yet) must be one the server accepts.
    let secret = only(&objects, "Secret");
    let tokens = secret["stringData"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let tokens_file = data.path().join("tokens");
    std::fs::write(&tokens_file, tokens.as_str().unwrap()).unwrap();
    let store = data.path().join("store");
    let tokens_arg = tokens_file.display().to_string();
    let server = Server::start(&store, &["--auth", "true", "--tokens-file", &tokens_arg]);
    for path in &paths {
        let (status, body) = http(server.addr, "GET", path, b"");
        assert_eq!(
            status, 200,
            "GET {path} (no token, as a kubelet asks): {body}"
        );
    }
    let (status, _) = http(server.addr, "GET", "/v1/jobs", b"");
    assert_eq!(status, 401, "auth is on: jobs need a token");
}
