/* symbody 3D viewer page (BSD-3-Clause, part of symbody). Needs the global THREE (bundled three.js).
 *
 * Data (script#symbody-data, JSON): t (base64 float64, K samples), frames [{name, kind, dims,
 * color, opacity, axes, segment}], pose (base64 float32, K x F x 8: position xyz, quaternion
 * xyzw, length scale), points [names], pts (base64 float32, K x P x 3), lines, traces,
 * world (quaternion turning N so that its "up" axis points up on screen), follow, title,
 * meshes [{file, format: "stl" | "obj" | "dae", size, data: base64 zlib bytes}] (a frame of kind
 * "mesh" names its table entry in `mesh` and its `scale`; the page then bundles three.js's
 * STL, OBJ and Collada loaders and fflate).
 * Positions are in N; between samples they are interpolated linearly, rotations by slerp.
 *
 * Test hook: window.symbody = {ready, setTime(t), time(), names(), position(name), frames(),
 * play(), pause(), playing(), screen(name), project(xyz), meshBounds(name), meshErrors,
 * firstFrameMs, webgl}.
 */
(function () {
  "use strict";
  const api = (window.symbody = { ready: false, error: null });
  try {
    main();
  } catch (err) {
    api.error = String(err && err.stack ? err.stack : err);
    const box = document.getElementById("symbody-message");
    if (box) { box.textContent = "symbody viewer: " + err; box.style.display = "block"; }
    throw err;
  }

  function decode(text, Type) {
    const bin = atob(text);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Type(bytes.buffer);
  }

  function inflate(text) {   // base64 zlib text -> Uint8Array (fflate, bundled with the loaders)
    const bin = atob(text);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return THREE.unzlibSync(bytes);
  }

  // 1x1 white PNG: what Collada texture references load instead of files (the page is offline)
  const WHITE_PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8/x8AAwMCAO+ip1sAAAAASUVORK5CYII=";

  function parseMesh(entry) {   // {geometry} (STL) or {object, own: Collada keeps its materials}
    const bytes = inflate(entry.data);
    if (entry.format === "stl") {
      const geometry = new THREE.STLLoader().parse(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
      if (!geometry.attributes.position || geometry.attributes.position.count === 0) throw new Error("no triangles");
      return { geometry: geometry };
    }
    const text = new TextDecoder().decode(bytes);
    if (entry.format === "obj") return { object: new THREE.OBJLoader().parse(text), own: false };
    const manager = new THREE.LoadingManager();
    manager.setURLModifier(function () { return WHITE_PIXEL; });
    const warn = console.warn;   // the loader warns about every Z_UP file, which is RViz's (and our) convention
    console.warn = function (message) {
      if (!(typeof message === "string" && message.indexOf("Z-UP coordinate system") >= 0)) warn.apply(console, arguments);
    };
    let dae;
    try { dae = new THREE.ColladaLoader(manager).parse(text, ""); } finally { console.warn = warn; }
    if (!dae || !dae.scene) throw new Error("not a Collada document");
    // keep the file's own axes, as RViz does: the loader turns Z_UP files to three.js's y-up
    dae.scene.rotation.set(0, 0, 0);
    return { object: dae.scene, own: true };
  }

  function main() {
    const data = JSON.parse(document.getElementById("symbody-data").textContent);
    const T = decode(data.t, Float64Array);
    const K = T.length;
    const F = data.frames.length;
    const P = data.points.length;
    const pose = decode(data.pose, Float32Array);
    const pts = decode(data.pts, Float32Array);
    const t0 = T[0], t1 = T[K - 1];

    const view = document.getElementById("symbody-view");
    const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    renderer.outputColorSpace = THREE.SRGBColorSpace;
    view.appendChild(renderer.domElement);
    const gl = renderer.getContext();
    api.webgl = gl ? (typeof WebGL2RenderingContext !== "undefined" && gl instanceof WebGL2RenderingContext ? "webgl2" : "webgl") : null;

    const scene = new THREE.Scene();
    scene.background = new THREE.Color(data.background);
    const world = new THREE.Group();
    world.quaternion.set(data.world[0], data.world[1], data.world[2], data.world[3]);
    scene.add(world);

    const camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
    scene.add(camera);
    scene.add(new THREE.HemisphereLight(0xffffff, 0x9a9a9a, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.8);
    sun.position.set(0.6, 1.0, 0.8);
    camera.add(sun);

    // ---------------------------------------------------------------- meshes
    const meshCache = [];
    api.meshErrors = [];
    function meshTemplate(index) {
      if (meshCache[index] === undefined) {
        const entry = data.meshes[index];
        try { meshCache[index] = parseMesh(entry); } catch (err) {
          meshCache[index] = null;
          api.meshErrors.push(entry.file + ": " + err);
        }
      }
      return meshCache[index];
    }
    function ownMaterial(material, spec) {   // a Collada material without its texture
      const copy = material.clone();
      if ("map" in copy) copy.map = null;
      if (spec.opacity < 1) { copy.transparent = true; copy.opacity = spec.opacity; copy.depthWrite = false; }
      copy.needsUpdate = true;
      return copy;
    }
    function meshObject(spec, material) {   // the mesh of a frame, scaled, sharing parsed geometry
      const group = new THREE.Group();
      group.scale.set(spec.scale[0], spec.scale[1], spec.scale[2]);
      const template = meshTemplate(spec.mesh);
      if (template === null) {
        const side = data.size * 0.05;
        group.scale.set(1, 1, 1);
        group.add(new THREE.Mesh(new THREE.BoxGeometry(side, side, side), material));
      } else if (template.geometry) {
        group.add(new THREE.Mesh(template.geometry, material));
      } else {
        const copy = template.object.clone(true);
        copy.traverse(function (node) {
          if (!node.isMesh) return;
          if (template.own) {
            node.material = Array.isArray(node.material) ? node.material.map(function (m) { return ownMaterial(m, spec); })
                                                         : ownMaterial(node.material, spec);
          } else {
            node.material = material;
          }
        });
        group.add(copy);
      }
      return group;
    }

    // ---------------------------------------------------------------- bodies
    const objects = [];
    const axesHelpers = [];
    for (let f = 0; f < F; f++) {
      const spec = data.frames[f];
      const d = spec.dims;
      let geometry = null;
      switch (spec.kind) {
        case "box": geometry = new THREE.BoxGeometry(d.width, d.height, d.depth); break;
        case "cylinder": geometry = new THREE.CylinderGeometry(d.radius, d.radius, d.length, 32); break;
        case "cone": geometry = new THREE.ConeGeometry(d.radius, d.length, 32); break;
        case "sphere": geometry = new THREE.SphereGeometry(d.radius, 32, 16); break;
        case "torus":
          geometry = new THREE.TorusGeometry(d.radius, d.tube_radius, 16, 72);
          geometry.rotateX(Math.PI / 2);   // axis from z to y, as cylinders
          break;
        case "plane": geometry = new THREE.PlaneGeometry(d.length, d.width); break;
        case "mesh": break;
        default: throw new Error("unknown shape " + spec.kind);
      }
      const material = new THREE.MeshPhongMaterial({
        color: new THREE.Color(spec.color), shininess: 40, specular: 0x333333,
        transparent: spec.opacity < 1, opacity: spec.opacity, depthWrite: spec.opacity >= 1,
        side: spec.kind === "plane" || spec.opacity < 1 ? THREE.DoubleSide : THREE.FrontSide,
      });
      const holder = new THREE.Group();
      holder.name = spec.name;
      const mesh = spec.kind === "mesh" ? meshObject(spec, material) : new THREE.Mesh(geometry, material);
      holder.add(mesh);
      const axes = new THREE.AxesHelper(spec.axes_length);
      axes.visible = !!spec.axes;
      holder.add(axes);
      axesHelpers.push([axes, !!spec.axes]);
      world.add(holder);
      objects.push({ holder: holder, mesh: mesh, segment: !!spec.segment });
    }

    // ---------------------------------------------------------------- lines and traces
    const pointIndex = {};
    data.points.forEach(function (name, i) { pointIndex[name] = i; });
    const current = new Float64Array(P * 3);
    const polylines = data.lines.map(function (names) {
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute("position", new THREE.BufferAttribute(new Float32Array(names.length * 3), 3));
      const line = new THREE.Line(geometry, new THREE.LineBasicMaterial({ color: data.line_color }));
      line.frustumCulled = false;
      world.add(line);
      return { ids: names.map(function (n) { return pointIndex[n]; }), geometry: geometry };
    });
    const traces = data.traces.map(function (name, j) {
      const i = pointIndex[name];
      const xyz = new Float32Array(K * 3);
      for (let k = 0; k < K; k++) for (let c = 0; c < 3; c++) xyz[3 * k + c] = pts[(k * P + i) * 3 + c];
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute("position", new THREE.BufferAttribute(xyz, 3));
      const colors = data.trace_colors;
      const line = new THREE.Line(geometry, new THREE.LineBasicMaterial({ color: colors[j % colors.length] }));
      line.frustumCulled = false;
      world.add(line);
      return geometry;
    });

    // ---------------------------------------------------------------- ground grid and camera
    function threeBox(b) {   // model-coordinate box -> box in screen (three.js) coordinates
      const box = new THREE.Box3();
      const v = new THREE.Vector3();
      for (let c = 0; c < 8; c++) {
        v.set(c & 1 ? b[1][0] : b[0][0], c & 2 ? b[1][1] : b[0][1], c & 4 ? b[1][2] : b[0][2]);
        box.expandByPoint(v.applyQuaternion(world.quaternion));
      }
      return box;
    }
    const allBox = threeBox(data.bounds_all);
    function currentBox() {   // the bodies where they are now, in screen coordinates
      const box = new THREE.Box3();
      for (const o of objects) box.expandByPoint(o.holder.getWorldPosition(new THREE.Vector3()));
      const v = new THREE.Vector3();
      for (let i = 0; i < P; i++) box.expandByPoint(v.set(current[3 * i], current[3 * i + 1], current[3 * i + 2]).applyQuaternion(world.quaternion));
      return box;
    }
    if (data.ground) {
      // a grid of short pieces (one per cell side): long lines that pass behind the camera are
      // dropped whole by some GL implementations (SwiftShader), short pieces are not
      const size = allBox.getSize(new THREE.Vector3());
      const extent = Math.max(size.x, size.z, data.size) * 1.3 + data.size;
      let step = Math.pow(10, Math.floor(Math.log10(Math.max(data.size, 1e-6))));
      while (extent / step > 200) step *= 2;
      const n = Math.max(2, Math.ceil(extent / step));
      const centre = allBox.getCenter(new THREE.Vector3());
      const x0 = centre.x - (n * step) / 2, z0 = centre.z - (n * step) / 2, y = allBox.min.y;
      const minor = [], major = [];
      for (let i = 0; i <= n; i++) {
        const target = (i % 5 === 0) ? major : minor;
        for (let j = 0; j < n; j++) {
          target.push(x0 + i * step, y, z0 + j * step, x0 + i * step, y, z0 + (j + 1) * step);
          target.push(x0 + j * step, y, z0 + i * step, x0 + (j + 1) * step, y, z0 + i * step);
        }
      }
      [[minor, 0xc9ced6], [major, 0x9aa3ad]].forEach(function (pair) {
        const geometry = new THREE.BufferGeometry();
        geometry.setAttribute("position", new THREE.Float32BufferAttribute(pair[0], 3));
        scene.add(new THREE.LineSegments(geometry, new THREE.LineBasicMaterial({ color: pair[1] })));
      });
    }

    const controls = new THREE.OrbitControls(camera, renderer.domElement);
    controls.enableDamping = false;
    function frameCamera(box, margin) {
      const centre = box.getCenter(new THREE.Vector3());
      const size = box.getSize(new THREE.Vector3());
      const radius = Math.max(size.length() / 2, data.size * 0.5, 1e-3);
      const distance = (radius / Math.sin((camera.fov * Math.PI) / 360)) * (margin || 1.25);
      const direction = new THREE.Vector3(0.45, 0.35, 1.0).normalize();
      camera.position.copy(centre).addScaledVector(direction, distance);
      camera.near = distance / 100;
      camera.far = distance * 100 + radius * 10;
      camera.updateProjectionMatrix();
      controls.target.copy(centre);
      controls.update();
    }

    // ---------------------------------------------------------------- state at a time
    let now = t0;
    let followName = data.follow || "";
    const qa = new THREE.Quaternion(), qb = new THREE.Quaternion();
    const followed = new THREE.Vector3();
    let followedBefore = null;

    function locate(t) {   // index i and weight a with t = (1 - a) T[i] + a T[i + 1]
      if (K === 1 || t <= t0) return [0, 0];
      if (t >= t1) return [K - 2, 1];
      let lo = 0, hi = K - 1;
      while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (T[mid] <= t) lo = mid; else hi = mid; }
      return [lo, (t - T[lo]) / (T[lo + 1] - T[lo])];
    }

    function apply(t) {
      now = Math.min(Math.max(t, t0), t1);
      const at = locate(now), i = at[0], a = at[1], j = K === 1 ? 0 : i + 1;
      for (let f = 0; f < F; f++) {
        const p = (i * F + f) * 8, q = (j * F + f) * 8;
        const o = objects[f];
        o.holder.position.set(pose[p] + a * (pose[q] - pose[p]), pose[p + 1] + a * (pose[q + 1] - pose[p + 1]),
                              pose[p + 2] + a * (pose[q + 2] - pose[p + 2]));
        qa.set(pose[p + 3], pose[p + 4], pose[p + 5], pose[p + 6]);
        qb.set(pose[q + 3], pose[q + 4], pose[q + 5], pose[q + 6]);
        o.holder.quaternion.slerpQuaternions(qa, qb, a);
        if (o.segment) o.mesh.scale.set(1, pose[p + 7] + a * (pose[q + 7] - pose[p + 7]), 1);
      }
      for (let n = 0; n < P * 3; n++) current[n] = pts[i * P * 3 + n] + a * (pts[j * P * 3 + n] - pts[i * P * 3 + n]);
      for (const line of polylines) {
        const arr = line.geometry.attributes.position.array;
        line.ids.forEach(function (id, m) { for (let c = 0; c < 3; c++) arr[3 * m + c] = current[3 * id + c]; });
        line.geometry.attributes.position.needsUpdate = true;
      }
      for (const geometry of traces) geometry.setDrawRange(0, a > 0 ? i + 2 : i + 1);
      if (followName) {   // move camera and target with the followed body, keeping the view
        const o = objects[data.frames.findIndex(function (s) { return s.name === followName; })];
        if (o) {
          world.updateMatrixWorld(true);
          o.holder.getWorldPosition(followed);
          if (followedBefore !== null) {
            const delta = followed.clone().sub(followedBefore);
            camera.position.add(delta);
            controls.target.add(delta);
            controls.update();
          }
          followedBefore = followed.clone();
        }
      }
      slider.value = String(now);
      clock.textContent = "t = " + now.toFixed(3) + " s / " + t1.toFixed(3) + " s";
    }

    // ---------------------------------------------------------------- controls bar
    const playButton = document.getElementById("symbody-play");
    const slider = document.getElementById("symbody-slider");
    const clock = document.getElementById("symbody-time");
    const speedSelect = document.getElementById("symbody-speed");
    const followSelect = document.getElementById("symbody-follow");
    const axesBox = document.getElementById("symbody-axes");
    slider.min = String(t0);
    slider.max = String(t1);
    slider.step = "any";
    data.frames.forEach(function (spec) {
      const option = document.createElement("option");
      option.value = spec.name;
      option.textContent = spec.name;
      followSelect.appendChild(option);
    });
    followSelect.value = followName;
    let playing = !!data.autoplay && K > 1;
    let speed = 1.0;
    let last = null;
    function setPlaying(on) {
      playing = on && K > 1;
      playButton.textContent = playing ? "\u275a\u275a pause" : "\u25b6 play";
      last = null;
    }
    playButton.addEventListener("click", function () {
      if (!playing && now >= t1) apply(t0);
      setPlaying(!playing);
    });
    slider.addEventListener("input", function () { setPlaying(false); apply(parseFloat(slider.value)); render(); });
    speedSelect.addEventListener("change", function () { speed = parseFloat(speedSelect.value); });
    followSelect.addEventListener("change", function () {
      followName = followSelect.value;
      followedBefore = null;
      apply(now);
      frameCamera(followName ? currentBox() : allBox, followName ? 1.7 : 1.25);
      render();
    });
    axesBox.addEventListener("change", function () {
      for (const pair of axesHelpers) pair[0].visible = axesBox.checked || pair[1];
      render();
    });
    window.addEventListener("keydown", function (event) {
      if (event.code === "Space" && event.target === document.body) { event.preventDefault(); playButton.click(); }
    });

    function resize() {
      const w = Math.max(view.clientWidth, 1), h = Math.max(view.clientHeight, 1);
      renderer.setSize(w, h);
      camera.aspect = w / h;
      camera.updateProjectionMatrix();
    }
    window.addEventListener("resize", function () { resize(); render(); });

    function render() { renderer.render(scene, camera); }

    function loop(stamp) {
      if (playing) {
        if (last !== null) {
          let t = now + ((stamp - last) / 1000) * speed;
          if (t > t1) t = t0 + ((t - t0) % Math.max(t1 - t0, 1e-9));
          apply(t);
        }
        last = stamp;
      }
      controls.update();
      render();
      requestAnimationFrame(loop);
    }

    // ---------------------------------------------------------------- test hook and start
    api.setTime = function (t) { setPlaying(false); apply(Number(t)); render(); return now; };
    api.time = function () { return now; };
    api.names = function () { return data.points.slice(); };
    api.frames = function () { return data.frames.map(function (s) { return s.name; }); };
    api.position = function (name) {
      const i = pointIndex[name];
      if (i === undefined) throw new Error("no point named " + name + "; known points: " + data.points.join(", "));
      return [current[3 * i], current[3 * i + 1], current[3 * i + 2]];
    };
    api.project = function (xyz) {   // page pixel (CSS px, from the top left) of a point given in N
      const v = new THREE.Vector3().fromArray(xyz).applyQuaternion(world.quaternion).project(camera);
      const rect = renderer.domElement.getBoundingClientRect();
      return [rect.left + ((v.x + 1) / 2) * rect.width, rect.top + ((1 - v.y) / 2) * rect.height];
    };
    api.meshBounds = function (name) {   // vertex count and box (in N) of a frame's drawn triangles now
      const f = data.frames.findIndex(function (s) { return s.name === name; });
      if (f < 0) throw new Error("no visualization frame named " + name);
      scene.updateMatrixWorld(true);
      const box = new THREE.Box3(), v = new THREE.Vector3();
      let count = 0;
      objects[f].holder.traverse(function (node) {
        if (!node.isMesh) return;
        const position = node.geometry.attributes.position;
        for (let i = 0; i < position.count; i++) {
          box.expandByPoint(world.worldToLocal(node.localToWorld(v.fromBufferAttribute(position, i))));
        }
        count += position.count;
      });
      return { vertices: count, min: box.min.toArray(), max: box.max.toArray() };
    };
    api.screen = function (name) { return api.project(api.position(name)); };
    api.play = function () { setPlaying(true); };
    api.pause = function () { setPlaying(false); };
    api.playing = function () { return playing; };
    api.samples = K;

    if (api.meshErrors.length) {
      const box = document.getElementById("symbody-message");
      box.textContent = "symbody viewer: could not read " + api.meshErrors.join("; ") + " (drawn as boxes)";
      box.style.display = "block";
    }
    resize();
    apply(t0);
    frameCamera(followName ? currentBox() : allBox, followName ? 1.7 : 1.25);
    render();
    setPlaying(playing);
    api.firstFrameMs = performance.now();
    api.ready = true;
    requestAnimationFrame(loop);
  }
})();
